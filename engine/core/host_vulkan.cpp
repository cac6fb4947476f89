#include "engine/core/host_vulkan.h"

#include <algorithm>

#include "engine/core/device_info.h"

namespace tvlm {

namespace {

// The structs of a pNext chain, by type (Vulkan structs all begin with sType, pNext).
const VkBaseInStructure* find(const void* chain, VkStructureType type) {
    for (auto* s = static_cast<const VkBaseInStructure*>(chain); s; s = s->pNext)
        if (s->sType == type) return s;
    return nullptr;
}

}  // namespace

HostFeatures host_features(const HostVulkan& host) {
    HostFeatures f;
    const auto has = [&](const char* name) {
        return std::find(host.enabled_extensions.begin(), host.enabled_extensions.end(), name) !=
               host.enabled_extensions.end();
    };
    f.push_descriptor = has(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    f.memory_fd = has(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
    f.semaphore_fd = has(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
    if (auto* s = find(host.enabled_features, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2)) {
        const auto& base = reinterpret_cast<const VkPhysicalDeviceFeatures2*>(s)->features;
        f.storage_without_format = base.shaderStorageImageWriteWithoutFormat;
        f.float64 = base.shaderFloat64;
        f.anisotropy = base.samplerAnisotropy;
    }
    if (auto* s = find(host.enabled_features, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES))
        f.storage_16bit = reinterpret_cast<const VkPhysicalDeviceVulkan11Features*>(s)->storageBuffer16BitAccess;
    if (auto* s = find(host.enabled_features, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)) {
        const auto* v12 = reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(s);
        f.timeline_semaphore = v12->timelineSemaphore;
        f.float16 = v12->shaderFloat16;
    }
    if (auto* s = find(host.enabled_features, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES)) {
        const auto* v13 = reinterpret_cast<const VkPhysicalDeviceVulkan13Features*>(s);
        f.synchronization2 = v13->synchronization2;
        f.maintenance4 = v13->maintenance4;
        f.full_subgroups = v13->computeFullSubgroups;
    }
    return f;
}

std::vector<std::string> missing_requirements(const HostFeatures& f) {
    std::vector<std::string> missing;
    if (!f.push_descriptor)
        missing.push_back("extension VK_KHR_push_descriptor: add it to VkDeviceCreateInfo::ppEnabledExtensionNames");
    if (!f.synchronization2)
        missing.push_back("synchronization2: set VkPhysicalDeviceVulkan13Features::synchronization2 = VK_TRUE");
    if (!f.maintenance4)
        missing.push_back("maintenance4: set VkPhysicalDeviceVulkan13Features::maintenance4 = VK_TRUE");
    if (!f.timeline_semaphore)
        missing.push_back("timelineSemaphore: set VkPhysicalDeviceVulkan12Features::timelineSemaphore = VK_TRUE");
    if (!f.storage_without_format)
        missing.push_back("shaderStorageImageWriteWithoutFormat: set it in VkPhysicalDeviceFeatures2::features");
    return missing;
}

DeviceRequirements::DeviceRequirements(VkPhysicalDevice physical, bool export_memory, bool export_semaphores) {
    VkPhysicalDeviceVulkan13Features supported13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features supported12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &supported13};
    VkPhysicalDeviceVulkan11Features supported11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &supported12};
    VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &supported11};
    vkGetPhysicalDeviceFeatures2(physical, &supported);
    v13.synchronization2 = VK_TRUE;
    v13.maintenance4 = VK_TRUE;  // required by Vulkan 1.3; glslc emits LocalSizeId for 1.3 targets
    v12.timelineSemaphore = VK_TRUE;
    features.features.shaderStorageImageWriteWithoutFormat = VK_TRUE;  // one shader for every format
    // Used where the device has them: float16 patch output, anisotropic sampling, the box
    // filter's exact arithmetic (box_filter.h), which needs doubles in shaders, and full
    // subgroups for its packed shaders (box_mips_words.glsl), float16 conversions for the
    // packed RGBA16F one.
    v11.storageBuffer16BitAccess = supported11.storageBuffer16BitAccess;
    features.features.samplerAnisotropy = supported.features.samplerAnisotropy;
    features.features.shaderFloat64 = supported.features.shaderFloat64;
    v13.computeFullSubgroups = supported13.computeFullSubgroups;
    v12.shaderFloat16 = supported12.shaderFloat16;
    extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    if (export_memory && has_extension(physical, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME))
        extensions.push_back(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
    if (export_semaphores && has_extension(physical, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME))
        extensions.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
}

HostVulkan DeviceRequirements::host(VkInstance instance, VkPhysicalDevice physical, VkDevice device,
                                    uint32_t queue_family) const {
    HostVulkan h;
    h.instance = instance;
    h.physical_device = physical;
    h.device = device;
    h.queue_family = queue_family;
    h.enabled_features = &features;
    for (const char* e : extensions) h.enabled_extensions.emplace_back(e);
    return h;
}

}  // namespace tvlm
