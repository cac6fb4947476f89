#include "host_vulkan.h"

#include <algorithm>

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
    if (auto* s = find(host.enabled_features, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES))
        f.timeline_semaphore = reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(s)->timelineSemaphore;
    if (auto* s = find(host.enabled_features, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES)) {
        const auto* v13 = reinterpret_cast<const VkPhysicalDeviceVulkan13Features*>(s);
        f.synchronization2 = v13->synchronization2;
        f.maintenance4 = v13->maintenance4;
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

}  // namespace tvlm
