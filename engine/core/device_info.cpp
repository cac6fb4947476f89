#include "engine/core/device_info.h"

#include <cctype>
#include <cstdio>
#include <cstring>

#include "engine/core/vk_check.h"

namespace tvlm {

std::string Uuid::str() const {
    std::string s;
    char hex[3];
    for (size_t i = 0; i < bytes.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
        std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
        s += hex;
    }
    return s;
}

std::optional<Uuid> Uuid::parse(const std::string& text) {
    std::string digits;
    for (char c : text)
        if (c != '-') digits += c;
    if (digits.size() != 32) return std::nullopt;
    for (char c : digits)
        if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    Uuid uuid;
    for (size_t i = 0; i < 16; ++i) {
        unsigned value = 0;
        if (std::sscanf(digits.c_str() + 2 * i, "%2x", &value) != 1) return std::nullopt;
        uuid.bytes[i] = static_cast<uint8_t>(value);
    }
    return uuid;
}

std::string api_version_string(uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
           std::to_string(VK_API_VERSION_PATCH(v));
}

namespace {

const char* type_name(VkPhysicalDeviceType type) {
    switch (type) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
        default: return "other";
    }
}

bool image_exportable(VkPhysicalDevice device) {
    VkPhysicalDeviceExternalImageFormatInfo external{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO};
    external.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkPhysicalDeviceImageFormatInfo2 info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2, &external};
    info.format = VK_FORMAT_R8G8B8A8_UNORM;
    info.type = VK_IMAGE_TYPE_2D;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    VkExternalImageFormatProperties external_props{VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES};
    VkImageFormatProperties2 props{VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2, &external_props};
    if (vkGetPhysicalDeviceImageFormatProperties2(device, &info, &props) != VK_SUCCESS) return false;
    return external_props.externalMemoryProperties.externalMemoryFeatures & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT;
}

bool timeline_exportable(VkPhysicalDevice device) {
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkPhysicalDeviceExternalSemaphoreInfo info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO, &type};
    info.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkExternalSemaphoreProperties props{VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
    vkGetPhysicalDeviceExternalSemaphoreProperties(device, &info, &props);
    return props.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT;
}

}  // namespace

bool has_extension(VkPhysicalDevice device, const char* name) {
    uint32_t count = 0;
    vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> extensions(count);
    vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data());
    for (const auto& e : extensions)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

std::vector<DeviceInfo> enumerate_devices(VkInstance instance) {
    uint32_t count = 0;
    check_vk(vkEnumeratePhysicalDevices(instance, &count, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> handles(count);
    check_vk(vkEnumeratePhysicalDevices(instance, &count, handles.data()), "vkEnumeratePhysicalDevices");

    std::vector<DeviceInfo> devices;
    for (uint32_t i = 0; i < count; ++i) {
        DeviceInfo d;
        d.index = i;
        d.handle = handles[i];
        VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
        VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, &id};
        VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &driver};
        vkGetPhysicalDeviceProperties2(handles[i], &props);
        d.name = props.properties.deviceName;
        d.type = type_name(props.properties.deviceType);
        d.api_version = props.properties.apiVersion;
        d.driver = std::string(driver.driverName) + " " + driver.driverInfo;
        std::memcpy(d.uuid.bytes.data(), id.deviceUUID, VK_UUID_SIZE);
        d.max_image_dimension_2d = props.properties.limits.maxImageDimension2D;
        d.max_image_array_layers = props.properties.limits.maxImageArrayLayers;

        uint32_t family_count = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(handles[i], &family_count, nullptr);
        std::vector<VkQueueFamilyProperties> families(family_count);
        vkGetPhysicalDeviceQueueFamilyProperties(handles[i], &family_count, families.data());
        const VkQueueFlags needed = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;  // blits need graphics
        for (uint32_t f = 0; f < family_count && d.queue_family == UINT32_MAX; ++f)
            if ((families[f].queueFlags & needed) == needed) d.queue_family = f;

        if (d.api_version >= VK_API_VERSION_1_3) {
            VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
            VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13};
            VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
            vkGetPhysicalDeviceFeatures2(handles[i], &features);
            d.timeline_semaphores = f12.timelineSemaphore;
            d.synchronization2 = f13.synchronization2;
        }
        VkPhysicalDeviceFeatures base;
        vkGetPhysicalDeviceFeatures(handles[i], &base);
        d.storage_without_format = base.shaderStorageImageWriteWithoutFormat;
        d.push_descriptor = has_extension(handles[i], VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
        d.memory_fd_export = has_extension(handles[i], VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) &&
                             image_exportable(handles[i]);
        d.semaphore_fd_export = has_extension(handles[i], VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME) &&
                                timeline_exportable(handles[i]);
        devices.push_back(std::move(d));
    }
    return devices;
}

}  // namespace tvlm
