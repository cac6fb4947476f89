#pragma once
// The CUDA devices of this machine, with the UUIDs Vulkan devices are matched by.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tvlm {

struct CudaDeviceInfo {
    int ordinal = 0;
    std::string name;
    std::array<uint8_t, 16> uuid{};
    int compute_major = 0, compute_minor = 0;
    size_t total_memory = 0;
};

struct CudaDeviceList {
    std::vector<CudaDeviceInfo> devices;
    std::string unavailable_reason;  // why the list is empty ("no NVIDIA driver", ...)
};

CudaDeviceList list_cuda_devices();

// The current CUDA device's multiprocessors: what kernels size grids of resident blocks by.
int current_device_multiprocessors();

// The current CUDA device's compute capability, major part (8 for sm_80 and sm_86).
int current_device_compute_major();

// Blocks of `kernel` (`threads` threads, `dynamic_shared` bytes of dynamic shared memory)
// that the current device's multiprocessors hold at once, at least 1: a grid of one wave.
// Where `dynamic_shared` is above the 48 KB a kernel gets by default, the kernel is first
// allowed that much (cudaFuncAttributeMaxDynamicSharedMemorySize). The occupancy query and
// the attribute cost microseconds of host time, so each device, kernel, block size and byte
// count is asked once and remembered.
uint32_t resident_wave_blocks(const void* kernel, int threads, size_t dynamic_shared = 0);

}  // namespace tvlm
