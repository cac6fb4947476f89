#pragma once
// One queue, its command pool and the context's timeline semaphore: every submission
// signals the next timeline value, which is what waits (host, CUDA, other submissions) use.
// Each submission also signals a recycled fence, polled to retire command buffers and
// staging: the validation layer (1.3.239) tracks completion reliably through fences but
// not through timeline queries on real GPUs (KhronosGroup/Vulkan-ValidationLayers#1999,
// #4308; seen on NVIDIA's driver).
//
// Thread-safe: objects on one Context share its queue, so submit, waits and retiring take
// one lock (recursive: a record callback may itself create a context constant). Recording
// runs under it, host waits do not. A wait_before_next joins the next submission from any
// thread: callers that chain CUDA work into a particular submission keep both on one thread.
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "engine/core/host_buffer.h"
#include "engine/core/timeline.h"
#include "engine/core/vk_handle.h"

namespace tvlm {

// A wait of a submission on another timeline semaphore (e.g. signalled by CUDA).
struct TimelineWait {
    VkSemaphore semaphore = VK_NULL_HANDLE;
    uint64_t value = 0;
    VkPipelineStageFlags2 stages = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
};

class CommandQueue {
public:
    CommandQueue(VkDevice device, uint32_t family, bool exportable_timeline, uint32_t index = 0);
    CommandQueue(const CommandQueue&) = delete;
    CommandQueue& operator=(const CommandQueue&) = delete;
    ~CommandQueue();  // waits for in-flight work, then frees everything

    // Records into a fresh command buffer and submits it. Returns the timeline value that
    // is signalled when the commands complete. `staging` buffers are kept alive until then.
    uint64_t submit(const std::function<void(VkCommandBuffer)>& record, std::vector<HostBuffer> staging = {},
                    const std::vector<TimelineWait>& waits = {});
    // The next submission also waits for `wait` (e.g. CUDA releasing a texture it read),
    // on the GPU: no host wait. Waits on one semaphore with the same stages merge into the
    // largest value (a timeline only moves forward): a batch of frames rewriting k slots
    // gives the submission one wait, not k.
    void wait_before_next(const TimelineWait& wait);
    // Host wait (tools, tests, readback); never on a per-frame path.
    void wait(uint64_t value);
    void wait_all() { wait(last_submitted_); }
    uint64_t last_submitted() const {
        const std::lock_guard lock(mutex_);
        return last_submitted_;
    }

    TimelineSemaphore& timeline() { return timeline_; }
    VkQueue handle() const { return queue_; }
    uint32_t family() const { return family_; }

private:
    struct InFlight {
        uint64_t value;
        VkCommandBuffer commands;
        VkFenceHandle fence;
        std::vector<HostBuffer> staging;
    };
    VkFenceHandle take_fence();
    void retire_completed();

    mutable std::recursive_mutex mutex_;  // everything below but the handles set once
    VkDevice device_;
    uint32_t family_;
    VkQueue queue_ = VK_NULL_HANDLE;
    VkCommandPoolHandle pool_;  // freeing it frees every command buffer
    TimelineSemaphore timeline_;
    uint64_t last_submitted_ = 0;
    std::vector<InFlight> in_flight_;
    std::vector<VkCommandBuffer> free_commands_;
    std::vector<VkFenceHandle> free_fences_;
    std::vector<TimelineWait> pending_waits_;
};

}  // namespace tvlm
