#pragma once
// A headless Vulkan context: instance, chosen physical device, logical device, one queue
// with its timeline semaphore. Everything else in the engine is created from a Context.
// Not movable: textures and pipelines keep a reference to it.
//
// Threads: a Context may be shared by threads, each using objects of its own (textures,
// samplers, pipelines' users): the queue and the registries below take locks. One object
// (a Texture, a sampler) is used by one thread at a time; callers that share one lock it.
#include <map>
#include <mutex>
#include <memory>
#include <span>
#include <string>

#include "engine/core/command_queue.h"
#include "engine/core/compute_pipeline.h"
#include "engine/core/device_choice.h"
#include "engine/core/gpu_buffer.h"
#include "engine/core/host_vulkan.h"
#include "engine/core/instance.h"

namespace tvlm {

struct ContextDesc {
    DeviceSelector device;                            // default: the best device
    bool validation = validation_requested_by_env();  // TVLM_VALIDATION=1 turns it on
};

class Context {
public:
    explicit Context(const ContextDesc& desc = {});
    // Adopts an application's instance, device and queue (host_vulkan.h says what the
    // device needs): throws Error listing every missing extension or feature and how to
    // enable it. Destroys only what it created (its queue's pool, semaphore, pipelines).
    explicit Context(const HostVulkan& host);
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;
    ~Context();

    VkInstance instance() const { return instance_.handle(); }
    VkPhysicalDevice physical_device() const { return info_.handle; }
    VkDevice device() const { return device_; }
    const DeviceInfo& device_info() const { return info_; }
    const VkPhysicalDeviceLimits& limits() const { return limits_; }
    bool memory_export() const { return info_.memory_fd_export; }
    bool semaphore_export() const { return info_.semaphore_fd_export; }
    bool half_storage() const { return half_storage_; }  // 16-bit values in storage buffers
    bool anisotropy() const { return anisotropy_; }      // anisotropic samplers that work
    bool float64() const { return float64_; }            // doubles in shaders (box filter)
    // Compute pipelines that require full subgroups of 8 or more, with quad and shuffle
    // operations (the packed box shaders; without them the general one runs).
    bool subgroup_shuffles() const { return subgroup_shuffles_; }
    // float16 types in shaders, conversions to them that round to nearest even, and
    // infinities and NaNs kept in arithmetic as IEEE says (shaderFloat16, RoundingModeRTE for
    // 16 bits, SignedZeroInfNanPreserve for 16, 32 and 64): the packed RGBA16F box shader
    // then rounds in one conversion and tests no bits for infinities.
    bool ieee_float16() const { return ieee_float16_; }
    ValidationLog& validation_log() { return instance_.validation_log(); }
    bool validation() const { return instance_.validation(); }
    CommandQueue& queue() { return *queue_; }

    // The pipeline registered under `key`, built from `desc` on first use and kept.
    const ComputePipeline& pipeline(const std::string& key, const ComputePipelineDesc& desc);
    // A device-local storage buffer registered under `key`, filled with `words` on first use
    // (in-queue: later submissions see it) and kept: tables shaders read.
    const GpuBuffer& constant_buffer(const std::string& key, std::span<const uint32_t> words);
    // Nearest, clamp-to-edge, unnormalised-free sampler for texelFetch-style reads.
    VkSampler point_sampler() const { return point_sampler_.get(); }

private:
    void finish_setup(bool exportable_timeline, uint32_t queue_index);  // queue and sampler

    Instance instance_;
    DeviceInfo info_;
    VkPhysicalDeviceLimits limits_{};
    VkDevice device_ = VK_NULL_HANDLE;
    std::unique_ptr<CommandQueue> queue_;
    std::mutex registry_mutex_;  // pipelines_ and constants_
    std::map<std::string, std::unique_ptr<ComputePipeline>> pipelines_;
    std::map<std::string, std::unique_ptr<GpuBuffer>> constants_;
    VkSamplerHandle point_sampler_;
    bool half_storage_ = false;
    bool anisotropy_ = false;
    bool float64_ = false;
    bool subgroup_shuffles_ = false;
    bool ieee_float16_ = false;
    bool owns_device_ = true;
};

}  // namespace tvlm
