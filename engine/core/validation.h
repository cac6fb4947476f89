#pragma once
// Collects validation-layer messages so that tests can fail on any of them.
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "engine/core/vulkan.h"

namespace tvlm {

class ValidationLog {
public:
    // Warnings and errors seen so far; info and verbose messages are not counted.
    size_t count() const { return count_.load(); }
    std::vector<std::string> messages() const;
    void clear();

    // The VkDebugUtilsMessengerCreateInfoEXT that reports into this log.
    VkDebugUtilsMessengerCreateInfoEXT messenger_info();

private:
    static VKAPI_ATTR VkBool32 VKAPI_CALL callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);

    mutable std::mutex mutex_;
    std::vector<std::string> messages_;
    std::atomic<size_t> count_{0};
};

}  // namespace tvlm
