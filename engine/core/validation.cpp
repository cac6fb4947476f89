#include "engine/core/validation.h"

#include <cstdio>

namespace tvlm {

std::vector<std::string> ValidationLog::messages() const {
    std::lock_guard lock(mutex_);
    return messages_;
}

void ValidationLog::clear() {
    std::lock_guard lock(mutex_);
    messages_.clear();
    count_ = 0;
}

VkDebugUtilsMessengerCreateInfoEXT ValidationLog::messenger_info() {
    VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    info.pfnUserCallback = &ValidationLog::callback;
    info.pUserData = this;
    return info;
}

VKAPI_ATTR VkBool32 VKAPI_CALL ValidationLog::callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                       VkDebugUtilsMessageTypeFlagsEXT,
                                                       const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
    auto* log = static_cast<ValidationLog*>(user);
    const char* level = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning";
    std::string text = std::string("vulkan validation ") + level + ": " +
                       (data && data->pMessage ? data->pMessage : "(no message)");
    std::fprintf(stderr, "%s\n", text.c_str());
    std::lock_guard lock(log->mutex_);
    log->messages_.push_back(std::move(text));
    log->count_++;
    return VK_FALSE;
}

}  // namespace tvlm
