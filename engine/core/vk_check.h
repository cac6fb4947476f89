#pragma once
// VkResult -> tvlm::Error.
#include "engine/error.h"
#include "engine/core/vulkan.h"

namespace tvlm {

// Name of a VkResult ("VK_ERROR_OUT_OF_DEVICE_MEMORY").
const char* vk_result_name(VkResult result);

// Throws Error("<what> failed: <VK_...>") unless result is VK_SUCCESS.
void check_vk(VkResult result, const char* what);

}  // namespace tvlm
