#pragma once
// Which CUDA device is the same GPU as a Vulkan device (equal 16-byte UUIDs).
#include <optional>
#include <string>

#include "engine/core/device_info.h"

namespace tvlm {

struct CudaMatch {
    bool cuda_built = false;     // texturevlm was built with the CUDA backend
    std::string unavailable;     // why no CUDA device could be listed, if none
    std::optional<int> ordinal;  // CUDA ordinal of the matching device
    std::string name;            // its name
};

CudaMatch match_cuda_device(const DeviceInfo& vulkan_device);

}  // namespace tvlm
