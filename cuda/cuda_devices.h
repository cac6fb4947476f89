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

// Allows `kernel` up to `bytes` of dynamic shared memory on the current device: set once
// per device and kernel (an attribute of the function on each device), remembered. Above
// 48 KB of shared memory, dynamic and static together, a launch needs it, so a kernel with
// static shared memory of its own launched with a little under 48 KB of dynamic is refused
// without it: kernels whose launches vary call this with the most any of them takes.
void allow_dynamic_shared(const void* kernel, size_t bytes);

// Blocks of `kernel` (`threads` threads, `dynamic_shared` bytes of dynamic shared memory)
// that the current device's multiprocessors hold at once, at least 1: a grid of one wave.
// The kernel is first allowed `dynamic_shared` bytes (allow_dynamic_shared). The occupancy
// query and the attribute cost microseconds of host time, so each device, kernel, block
// size and byte count is asked once and remembered.
uint32_t resident_wave_blocks(const void* kernel, int threads, size_t dynamic_shared = 0);

}  // namespace tvlm
