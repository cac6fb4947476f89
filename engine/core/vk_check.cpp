#include "engine/core/vk_check.h"

namespace tvlm {

const char* vk_result_name(VkResult result) {
    switch (result) {
#define TVLM_CASE(name) \
    case name: return #name;
        TVLM_CASE(VK_SUCCESS)
        TVLM_CASE(VK_NOT_READY)
        TVLM_CASE(VK_TIMEOUT)
        TVLM_CASE(VK_INCOMPLETE)
        TVLM_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
        TVLM_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        TVLM_CASE(VK_ERROR_INITIALIZATION_FAILED)
        TVLM_CASE(VK_ERROR_DEVICE_LOST)
        TVLM_CASE(VK_ERROR_MEMORY_MAP_FAILED)
        TVLM_CASE(VK_ERROR_LAYER_NOT_PRESENT)
        TVLM_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
        TVLM_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
        TVLM_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
        TVLM_CASE(VK_ERROR_TOO_MANY_OBJECTS)
        TVLM_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
        TVLM_CASE(VK_ERROR_FRAGMENTED_POOL)
        TVLM_CASE(VK_ERROR_UNKNOWN)
        TVLM_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
        TVLM_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        TVLM_CASE(VK_ERROR_FRAGMENTATION)
        TVLM_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
#undef TVLM_CASE
        default: return "VK_RESULT_UNKNOWN";
    }
}

void check_vk(VkResult result, const char* what) {
    if (result == VK_SUCCESS) return;
    std::string message = std::string(what) + " failed: " + vk_result_name(result);
    if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY)
        message += " (free some memory or use a smaller image or batch)";
    if (result == VK_ERROR_DEVICE_LOST)
        message += " (the GPU driver reset the device; check dmesg and the driver version)";
    throw Error(message);
}

}  // namespace tvlm
