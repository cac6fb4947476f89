#pragma once
// The example's renderer: everything an application owns before it hears of texturevlm.
// Its instance (validation on request), a device created with texturevlm's requirements
// (DeviceRequirements) plus its own (dynamic rendering), a queue, a graphics pipeline, an
// RGBA8 image with a full mip chain that it renders into, command buffers, and a timeline
// semaphore for hand-offs. Where the device can export memory and semaphores (NVIDIA), the
// image's memory and the semaphore are made exportable, so CUDA can map the image zero-copy
// and wait for frames on the GPU.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/core/device_memory.h"
#include "engine/core/host_vulkan.h"
#include "engine/textures/texture.h"
#include "engine/core/validation.h"
#include "engine/core/vulkan.h"

namespace example {

// A semaphore operation of a submission: wait for, or signal, `value` of the timeline.
struct TimelineStep {
    uint64_t value = 0;
    VkPipelineStageFlags2 stages = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
};

class Renderer {
public:
    explicit Renderer(uint32_t size);
    Renderer(const Renderer&) = delete;
    Renderer& operator=(const Renderer&) = delete;
    ~Renderer();

    // For texturevlm's Context on this device and queue.
    tvlm::HostVulkan objects() const;
    // The image as texturevlm sees it: with its exportable memory where there is one.
    tvlm::ApplicationImage image() const;
    bool exportable() const { return exportable_; }  // image memory and semaphore both
    VkSemaphore timeline() const { return timeline_; }
    uint32_t size() const { return size_; }

    // The scene at `time` into level 0 (the whole image moved to COLOR_ATTACHMENT first:
    // texturevlm tracks one layout for the image).
    void draw(VkCommandBuffer cmd, tvlm::Texture& frame, float time) const;

    // Command buffer `slot` of two, after its previous submission completed, begun.
    VkCommandBuffer begin(uint32_t slot);
    // Ends and submits the slot's command buffer on the application's queue, waiting for
    // and signalling the timeline where asked (value 0: no wait / no signal).
    void submit(uint32_t slot, TimelineStep wait = {}, TimelineStep signal = {});
    void wait_idle() const;

    tvlm::ValidationLog& log() { return log_; }
    bool validation() const { return validation_; }

private:
    void make_device();
    void make_image();
    void make_pipeline();
    VkShaderModule module(std::span<const uint32_t> words) const;

    tvlm::ValidationLog log_;
    bool validation_ = false;
    uint32_t size_ = 0;
    VkInstance instance_ = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    uint32_t family_ = 0;
    VkQueue queue_ = VK_NULL_HANDLE;
    std::unique_ptr<tvlm::DeviceRequirements> wanted_;  // the chain the device was created with
    bool exportable_ = false;
    VkImage image_ = VK_NULL_HANDLE;
    tvlm::DeviceMemory memory_;
    VkImageView target_ = VK_NULL_HANDLE;  // level 0, rendered to
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer commands_[2] = {};
    VkFence fences_[2] = {};
    VkSemaphore timeline_ = VK_NULL_HANDLE;
};

}  // namespace example
