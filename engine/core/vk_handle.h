#pragma once
// One move-only owner for every Vulkan object: destroyed once, by the vkDestroy* / vkFree*
// that matches it, with the device (or instance) that made it. Owner classes hold these and
// default their moves: none writes move or destroy code of its own. A class's handles are
// destroyed in the reverse order of their declaration (a pipeline before its layout).
#include <type_traits>
#include <utility>

#include "engine/core/vulkan.h"

namespace tvlm {

// Destroy is volk's function pointer (&vkDestroySampler: loaded at run time, so its address
// is what is constant) or a plain function of the same signature (Parent, Handle,
// const VkAllocationCallbacks*).
template <class Handle, auto Destroy, class Parent = VkDevice>
class VkHandle {
public:
    VkHandle() = default;
    VkHandle(Parent parent, Handle handle) : parent_(parent), handle_(handle) {}  // takes ownership
    VkHandle(VkHandle&& o) noexcept : parent_(o.parent_), handle_(std::exchange(o.handle_, Handle{})) {}
    VkHandle& operator=(VkHandle&& o) noexcept {
        if (this != &o) {
            reset();
            parent_ = o.parent_;
            handle_ = std::exchange(o.handle_, Handle{});
        }
        return *this;
    }
    VkHandle(const VkHandle&) = delete;
    VkHandle& operator=(const VkHandle&) = delete;
    ~VkHandle() { reset(); }

    Handle get() const { return handle_; }
    // Where vkCreate* writes the new handle, owned from then on: the current one is destroyed
    // and the slot left null first, so a create call that fails (and leaves it null) leaves
    // nothing to destroy.
    Handle* create(Parent parent) {
        reset();
        parent_ = parent;
        return &handle_;
    }
    explicit operator bool() const { return handle_ != Handle{}; }
    void reset() {
        if (handle_ != Handle{}) {
            if constexpr (std::is_pointer_v<std::remove_pointer_t<decltype(Destroy)>>)
                (*Destroy)(parent_, handle_, nullptr);
            else Destroy(parent_, handle_, nullptr);
        }
        handle_ = Handle{};
    }

private:
    Parent parent_{};
    Handle handle_{};
};

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
