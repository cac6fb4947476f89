#pragma once
// A stand-in for an application that embeds texturevlm: its own instance (with its own
// validation messenger), a device created with the features it chose, a queue, and images
// it creates and owns. Raw Vulkan, as a renderer would write it.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/device_memory.h"
#include "engine/core/host_vulkan.h"
#include "engine/core/loader.h"
#include "engine/mips/mip_filter.h"
#include "engine/textures/texture.h"
#include "engine/core/validation.h"
#include "engine/core/vk_check.h"

namespace tvlm::test {

// Features texturevlm uses where a device has them, which an application may leave off.
struct OptionalFeatures {
    bool full_subgroups = true;  // computeFullSubgroups: the packed box shaders
    bool float16 = true;         // shaderFloat16: the packed RGBA16F shader rounds by conversion
};

// What an application does before it ever hears of texturevlm: its own instance (with
// validation), a device with the features it chose, a queue.
class HostRenderer {
public:
    // `with_requirements`: what texturevlm needs enabled; `extra`: more device extensions;
    // `optional`: which of the features it uses where enabled are.
    explicit HostRenderer(bool with_requirements, std::vector<const char*> extra = {}, OptionalFeatures optional = {})
        : extensions_(std::move(extra)) {
        load_vulkan_loader();
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.apiVersion = VK_API_VERSION_1_3;
        const char* layers[] = {"VK_LAYER_KHRONOS_validation"};
        const char* instance_extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
        VkDebugUtilsMessengerCreateInfoEXT messenger_info = log_.messenger_info();
        VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, &messenger_info};
        info.pApplicationInfo = &app;
        info.enabledLayerCount = 1;
        info.ppEnabledLayerNames = layers;
        info.enabledExtensionCount = 1;
        info.ppEnabledExtensionNames = instance_extensions;
        check_vk(vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");
        volkLoadInstance(instance_);
        check_vk(vkCreateDebugUtilsMessengerEXT(instance_, &messenger_info, nullptr, &messenger_),
                 "vkCreateDebugUtilsMessengerEXT");
        uint32_t count = 1;
        vkEnumeratePhysicalDevices(instance_, &count, &physical_);
        REQUIRE(physical_ != VK_NULL_HANDLE);
        uint32_t families = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
        std::vector<VkQueueFamilyProperties> props(families);
        vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, props.data());
        while (family_ < families && !(props[family_].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++family_;
        REQUIRE(family_ < families);

        // texturevlm's requirements (without the export extensions: tests ask for those), or none.
        const void* chain = &no_features_;
        if (with_requirements) {
            requirements_.emplace(physical_, false, false);
            if (!optional.full_subgroups) requirements_->v13.computeFullSubgroups = VK_FALSE;
            if (!optional.float16) requirements_->v12.shaderFloat16 = VK_FALSE;
            chain = &requirements_->features;
            extensions_.insert(extensions_.end(), requirements_->extensions.begin(), requirements_->extensions.end());
        }
        const float priority = 1.0f;
        VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        queue.queueFamilyIndex = family_;
        queue.queueCount = 1;
        queue.pQueuePriorities = &priority;
        VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, chain};
        device_info.queueCreateInfoCount = 1;
        device_info.pQueueCreateInfos = &queue;
        device_info.enabledExtensionCount = static_cast<uint32_t>(extensions_.size());
        device_info.ppEnabledExtensionNames = extensions_.data();
        check_vk(vkCreateDevice(physical_, &device_info, nullptr, &device_), "vkCreateDevice");
    }
    HostRenderer(const HostRenderer&) = delete;
    HostRenderer& operator=(const HostRenderer&) = delete;
    ~HostRenderer() {
        vkDestroyDevice(device_, nullptr);
        vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
        vkDestroyInstance(instance_, nullptr);
    }

    HostVulkan objects() const {
        HostVulkan host;
        host.instance = instance_;
        host.physical_device = physical_;
        host.device = device_;
        host.queue_family = family_;
        host.enabled_features = requirements_ ? static_cast<const void*>(&requirements_->features) : &no_features_;
        for (const char* e : extensions_) host.enabled_extensions.emplace_back(e);
        return host;
    }
    // Records `record` into a command buffer of the application's own pool and submits it
    // on its queue with its own fence, then waits: what a renderer's frame does.
    template <class F>
    void submit(F record) {
        VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool_info.queueFamilyIndex = family_;
        VkCommandPool pool = VK_NULL_HANDLE;
        check_vk(vkCreateCommandPool(device_, &pool_info, nullptr, &pool), "vkCreateCommandPool");
        VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        alloc.commandPool = pool;
        alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        alloc.commandBufferCount = 1;
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        check_vk(vkAllocateCommandBuffers(device_, &alloc, &cmd), "vkAllocateCommandBuffers");
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        check_vk(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
        record(cmd);
        check_vk(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
        VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence fence = VK_NULL_HANDLE;
        check_vk(vkCreateFence(device_, &fence_info, nullptr, &fence), "vkCreateFence");
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &cmd;
        queue_submit(submit, fence);
        check_vk(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        vkDestroyFence(device_, fence, nullptr);
        vkDestroyCommandPool(device_, pool, nullptr);
    }
    // An empty submission on the application's queue that signals the binary `semaphore`.
    void submit_signal(VkSemaphore semaphore) {
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.signalSemaphoreCount = 1;
        submit.pSignalSemaphores = &semaphore;
        queue_submit(submit, VK_NULL_HANDLE);
    }
    VkDevice device() const { return device_; }
    VkPhysicalDevice physical_device() const { return physical_; }
    ValidationLog& log() { return log_; }

private:
    void queue_submit(const VkSubmitInfo& submit, VkFence fence) const {
        VkQueue queue = VK_NULL_HANDLE;
        vkGetDeviceQueue(device_, family_, 0, &queue);
        check_vk(vkQueueSubmit(queue, 1, &submit, fence), "vkQueueSubmit");
    }
    ValidationLog log_;
    VkInstance instance_ = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    uint32_t family_ = 0;
    std::optional<DeviceRequirements> requirements_;
    VkPhysicalDeviceFeatures2 no_features_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    std::vector<const char*> extensions_;
};

// An image the application creates and owns (with its memory): RGBA32F, the full chain.
// `exportable`: its memory one dedicated allocation made for export as an opaque fd, as
// docs/cpp.md tells applications to allocate images CUDA maps zero-copy.
class OwnImage {
public:
    OwnImage(const HostRenderer& host, uint32_t width, uint32_t height, VkImageUsageFlags usage,
             bool exportable = false)
        : device_(host.device()), usage_(usage), width_(width), height_(height) {
        VkExternalMemoryImageCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO};
        external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
        VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, exportable ? &external : nullptr};
        info.imageType = VK_IMAGE_TYPE_2D;
        info.format = VK_FORMAT_R32G32B32A32_SFLOAT;
        info.extent = {width, height, 1};
        info.mipLevels = full_mip_count(width, height);
        info.arrayLayers = 1;
        info.samples = VK_SAMPLE_COUNT_1_BIT;
        info.tiling = VK_IMAGE_TILING_OPTIMAL;
        info.usage = usage;
        info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
        check_vk(vkCreateImage(device_, &info, nullptr, &image_), "vkCreateImage");
        memory_ = allocate_image_memory(host.physical_device(), device_, image_, exportable);
        exportable_ = exportable;
    }
    OwnImage(const OwnImage&) = delete;
    OwnImage& operator=(const OwnImage&) = delete;
    ~OwnImage() { vkDestroyImage(device_, image_, nullptr); }  // the memory after it (member order)

    ApplicationImage described() const {
        ApplicationImage a{device_, image_, TextureDesc::sampled_2d(width_, height_, Format::rgba32f),
                           usage_,  0,      VK_IMAGE_LAYOUT_UNDEFINED};
        if (exportable_) {
            a.exportable_memory = memory_.handle();
            a.memory_size = memory_.size();
        }
        return a;
    }

private:
    VkDevice device_;
    DeviceMemory memory_;
    VkImage image_ = VK_NULL_HANDLE;
    VkImageUsageFlags usage_;
    uint32_t width_, height_;
    bool exportable_ = false;
};

}  // namespace tvlm::test
