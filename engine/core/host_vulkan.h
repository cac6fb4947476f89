#pragma once
// A renderer's own Vulkan objects, for a Context that adopts them (context.h) instead of
// creating its own: texturevlm records and submits on the application's device and queue
// and never destroys what it did not create.
//
// What the device must have been created with (requirements() lists what is missing and
// how to enable it):
//  - Vulkan 1.3, a queue family with compute;
//  - the extension VK_KHR_push_descriptor;
//  - features synchronization2 and maintenance4 (VkPhysicalDeviceVulkan13Features),
//    timelineSemaphore (VkPhysicalDeviceVulkan12Features), shaderStorageImageWriteWithoutFormat
//    (VkPhysicalDeviceFeatures).
// Used where enabled: shaderFloat64 (the exact box filter in compute shaders needs it),
// storageBuffer16BitAccess (float16 patch output), samplerAnisotropy (anisotropic
// layouts), computeFullSubgroups (VkPhysicalDeviceVulkan13Features: the packed box
// shaders), shaderFloat16 (VkPhysicalDeviceVulkan12Features: the packed RGBA16F box shader
// rounds by conversion), VK_KHR_external_memory_fd and VK_KHR_external_semaphore_fd (CUDA
// import).
//
// The queue is shared: Vulkan requires the application not to submit to it from another
// thread while texturevlm does (external synchronisation of VkQueue).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/vulkan.h"

namespace tvlm {

struct HostVulkan {
    // The application's loader entry point; null: the system loader's (libvulkan.so.1).
    // volk's entry points are process-wide, so it must be the same loader every context uses.
    PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    uint32_t queue_family = 0;
    uint32_t queue_index = 0;
    // What the device was created with: its enabled extensions, and the pNext chain given
    // to vkCreateDevice (a VkPhysicalDeviceFeatures2 and the Vulkan 1.1/1.2/1.3 feature
    // structs, read here; Vulkan cannot be asked which features a device has enabled).
    std::vector<std::string> enabled_extensions;
    const void* enabled_features = nullptr;
};

// The features and extensions texturevlm reads from a host device's creation chain.
struct HostFeatures {
    bool push_descriptor = false, synchronization2 = false, maintenance4 = false, timeline_semaphore = false;
    bool storage_without_format = false, float64 = false, storage_16bit = false, anisotropy = false;
    bool memory_fd = false, semaphore_fd = false, full_subgroups = false, float16 = false;
};
HostFeatures host_features(const HostVulkan& host);

// Each missing requirement with how to enable it at device creation; empty when none is.
std::vector<std::string> missing_requirements(const HostFeatures& features);

// What texturevlm needs enabled at vkCreateDevice, plus what it uses where the device has
// it, ready to pass: `features` heads a pNext chain (VkPhysicalDeviceFeatures2 -> Vulkan
// 1.1 -> 1.2 -> 1.3 features) for VkDeviceCreateInfo::pNext and `extensions` lists the
// device extensions. An application sets its own features in the same structs and
// appends its own extensions before creating the device; texturevlm's own Context creates
// its device from one too. The chain points into the object: it is neither copied nor moved.
struct DeviceRequirements {
    // `export_memory` / `export_semaphores`: also VK_KHR_external_memory_fd /
    // VK_KHR_external_semaphore_fd (CUDA import), where the device offers them.
    DeviceRequirements(VkPhysicalDevice physical, bool export_memory, bool export_semaphores);
    DeviceRequirements(const DeviceRequirements&) = delete;
    DeviceRequirements& operator=(const DeviceRequirements&) = delete;

    // The objects for a Context that adopts the device created from this chain.
    HostVulkan host(VkInstance instance, VkPhysicalDevice physical, VkDevice device, uint32_t queue_family) const;

    VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &v13};
    VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &v12};
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v11};
    std::vector<const char*> extensions;
};

}  // namespace tvlm
