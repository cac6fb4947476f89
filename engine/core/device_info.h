#pragma once
// What the engine needs to know about each Vulkan physical device, for choosing one and
// for `tvlm info`.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/vulkan.h"

namespace tvlm {

struct Uuid {
    std::array<uint8_t, 16> bytes{};
    bool operator==(const Uuid&) const = default;
    std::string str() const;  // 8-4-4-4-12 lower-case hex
    // Accepts 32 hex digits with or without dashes; nullopt otherwise.
    static std::optional<Uuid> parse(const std::string& text);
};

struct DeviceInfo {
    uint32_t index = 0;
    VkPhysicalDevice handle = VK_NULL_HANDLE;
    std::string name;
    std::string type;  // "discrete", "integrated", "virtual", "cpu", "other"
    uint32_t api_version = 0;
    std::string driver;  // driver name and info
    Uuid uuid;
    uint32_t queue_family = UINT32_MAX;  // a family with graphics and compute, or UINT32_MAX
    bool timeline_semaphores = false;
    bool synchronization2 = false;
    bool push_descriptor = false;         // VK_KHR_push_descriptor (compute bindings)
    bool storage_without_format = false;  // shaderStorageImageWriteWithoutFormat
    bool memory_fd_export = false;        // RGBA8 optimal images exportable as opaque fds
    bool semaphore_fd_export = false;     // timeline semaphores exportable as opaque fds
    uint32_t max_image_dimension_2d = 0;
    uint32_t max_image_array_layers = 0;
};

std::vector<DeviceInfo> enumerate_devices(VkInstance instance);

// Whether the device offers the extension `name`.
bool has_extension(VkPhysicalDevice device, const char* name);
std::string api_version_string(uint32_t version);

}  // namespace tvlm
