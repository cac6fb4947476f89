#pragma once
// One engine per GPU under torch.distributed (issue 21): each process makes its CUDA device
// current (torch's LOCAL_RANK convention), then opens the Vulkan device that is the same
// GPU, by UUID. CUDA_VISIBLE_DEVICES renumbers CUDA's devices, not their UUIDs, so it is
// respected as it is.
#include "engine/core/context.h"
#include "engine/core/device_choice.h"

namespace tvlm {

// The selector of the Vulkan device whose deviceUUID is the current CUDA device's. Throws
// Error where texturevlm was built without CUDA or no CUDA device is current.
DeviceSelector selector_for_current_cuda_device();

// A Context on that device. Throws Error naming the CUDA device (ordinal, name, UUID) and
// every Vulkan device's reason when it has no Vulkan twin.
Context open_rank_context(bool validation = false);

}  // namespace tvlm
