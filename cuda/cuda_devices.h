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

}  // namespace tvlm
