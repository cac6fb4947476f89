#pragma once
// Move-only owner of a headless VkInstance (no surface extensions) and, when validation
// is on, its debug messenger.
#include <memory>
#include <vector>

#include "engine/core/device_info.h"
#include "engine/core/validation.h"
#include "engine/core/vulkan.h"

namespace tvlm {

// True when TVLM_VALIDATION is set to anything but "" or "0".
bool validation_requested_by_env();

class Instance {
public:
    // Throws Error naming the package when the loader, a driver or the validation layer
    // is missing.
    explicit Instance(bool validation);
    // Adopts an application's instance (loaded through `get_instance_proc_addr`, null: the
    // system loader): never destroyed here; no validation messenger of ours.
    Instance(VkInstance adopted, PFN_vkGetInstanceProcAddr get_instance_proc_addr);
    Instance(Instance&& other) noexcept;
    Instance& operator=(Instance&&) = delete;
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;
    ~Instance();

    VkInstance handle() const { return instance_; }
    bool validation() const { return validation_; }
    ValidationLog& validation_log() { return *log_; }
    uint32_t api_version() const { return api_version_; }  // of the loader
    const std::vector<DeviceInfo>& devices() const { return devices_; }

private:
    VkInstance instance_ = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
    // This instance's own destroy function: volk's global pointer belongs to the instance
    // loaded last, which may not have the debug-utils extension (NULL there).
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger_ = nullptr;
    std::unique_ptr<ValidationLog> log_ = std::make_unique<ValidationLog>();
    bool validation_ = false;
    bool adopted_ = false;
    uint32_t api_version_ = 0;
    std::vector<DeviceInfo> devices_;
};

}  // namespace tvlm
