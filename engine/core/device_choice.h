#pragma once
// Picks the Vulkan physical device to use; when none fits, the error lists every device
// with the reason it was rejected.
#include <optional>
#include <string>
#include <vector>

#include "engine/core/device_info.h"

namespace tvlm {

struct DeviceSelector {
    std::optional<uint32_t> index;  // vkEnumeratePhysicalDevices order
    std::string name_contains;      // case-insensitive substring of the device name
    std::optional<Uuid> uuid;       // deviceUUID (for matching a CUDA device)
    bool require_memory_export = false;

    // "" = best device; "2" = index; a UUID (32 hex digits, dashes optional); else a name
    // substring. Reads nothing from the environment.
    static DeviceSelector parse(const std::string& text);
    std::string describe() const;
};

// Index into `devices` of the chosen device: among those that pass every requirement and
// the selector, the first discrete GPU, else integrated, else virtual, else CPU.
size_t choose_device(const std::vector<DeviceInfo>& devices, const DeviceSelector& selector);

// Why `device` cannot be used with `selector`, or "" if it can.
std::string rejection_reason(const DeviceInfo& device, const DeviceSelector& selector);

}  // namespace tvlm
