#pragma once
// Every Vulkan object's owner: engine/unique_handle.h's UniqueHandle with the vkDestroy* /
// vkFree* that matches it, called with the device (or instance) that made it.
#include <type_traits>

#include "engine/core/vulkan.h"
#include "engine/unique_handle.h"

namespace tvlm {

// How a Vulkan object is destroyed: Destroy is volk's function pointer (&vkDestroySampler:
// loaded at run time, so its address is what is constant) or a plain function of the same
// signature (Parent, Handle, const VkAllocationCallbacks*), called with the device (or
// instance) that made the handle.
template <auto Destroy, class Parent = VkDevice>
struct VkDestroy {
    VkDestroy() = default;
    VkDestroy(Parent made_by) : parent(made_by) {}  // implicit: handle.create(device)
    template <class Handle>
    void operator()(Handle handle) const {
        if constexpr (std::is_pointer_v<std::remove_pointer_t<decltype(Destroy)>>) (*Destroy)(parent, handle, nullptr);
        else Destroy(parent, handle, nullptr);
    }
    Parent parent{};
};

template <class Handle, auto Destroy, class Parent = VkDevice>
using VkHandle = UniqueHandle<Handle, VkDestroy<Destroy, Parent>>;

using VkBufferHandle = VkHandle<VkBuffer, &vkDestroyBuffer>;
using VkImageHandle = VkHandle<VkImage, &vkDestroyImage>;
using VkImageViewHandle = VkHandle<VkImageView, &vkDestroyImageView>;
using VkSamplerHandle = VkHandle<VkSampler, &vkDestroySampler>;
using VkSemaphoreHandle = VkHandle<VkSemaphore, &vkDestroySemaphore>;
using VkFenceHandle = VkHandle<VkFence, &vkDestroyFence>;
using VkCommandPoolHandle = VkHandle<VkCommandPool, &vkDestroyCommandPool>;
using VkQueryPoolHandle = VkHandle<VkQueryPool, &vkDestroyQueryPool>;
using VkShaderModuleHandle = VkHandle<VkShaderModule, &vkDestroyShaderModule>;
using VkPipelineHandle = VkHandle<VkPipeline, &vkDestroyPipeline>;
using VkPipelineLayoutHandle = VkHandle<VkPipelineLayout, &vkDestroyPipelineLayout>;
using VkDescriptorSetLayoutHandle = VkHandle<VkDescriptorSetLayout, &vkDestroyDescriptorSetLayout>;

}  // namespace tvlm
