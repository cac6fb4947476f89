#pragma once
// The CUDA device that is the same GPU as a Vulkan device.
#include "engine/core/device_info.h"

namespace tvlm {

// CUDA ordinal whose UUID equals the Vulkan device's; makes it current (cudaSetDevice).
// Throws Error listing both sides' devices and UUIDs when none matches.
int select_cuda_device(const DeviceInfo& vulkan_device);

}  // namespace tvlm
