#include "engine/core/command_queue.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "engine/core/vk_check.h"

namespace tvlm {

CommandQueue::CommandQueue(VkDevice device, uint32_t family, bool exportable_timeline, uint32_t index)
    : device_(device), family_(family), timeline_(device, 0, exportable_timeline) {
    vkGetDeviceQueue(device_, family_, index, &queue_);
    VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    info.queueFamilyIndex = family_;
    check_vk(vkCreateCommandPool(device_, &info, nullptr, pool_.create(device_)), "vkCreateCommandPool");
}

CommandQueue::~CommandQueue() {
    try {
        wait(last_submitted());
    } catch (const Error&) {
        // Device lost during teardown: nothing left to wait for; free what we own.
    }
    retire_completed();
}

VkFenceHandle CommandQueue::take_fence() {
    VkFenceHandle fence;
    if (!free_fences_.empty()) {
        fence = std::move(free_fences_.back());
        free_fences_.pop_back();
        return fence;
    }
    VkFenceCreateInfo info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check_vk(vkCreateFence(device_, &info, nullptr, fence.create(device_)), "vkCreateFence");
    return fence;
}

void CommandQueue::retire_completed() {
    // Submissions complete in order: retire from the oldest until one is still running.
    size_t done = 0;
    while (done < in_flight_.size() && vkGetFenceStatus(device_, in_flight_[done].fence.get()) == VK_SUCCESS) {
        InFlight& f = in_flight_[done++];
        const VkFence fence = f.fence.get();
        vkResetFences(device_, 1, &fence);
        free_fences_.push_back(std::move(f.fence));
        vkResetCommandBuffer(f.commands, 0);
        free_commands_.push_back(f.commands);
    }
    in_flight_.erase(in_flight_.begin(), in_flight_.begin() + static_cast<std::ptrdiff_t>(done));
}

void CommandQueue::wait_before_next(const TimelineWait& wait) {
    const std::lock_guard lock(mutex_);
    for (TimelineWait& pending : pending_waits_)
        if (pending.semaphore == wait.semaphore && pending.stages == wait.stages) {
            pending.value = std::max(pending.value, wait.value);
            return;
        }
    pending_waits_.push_back(wait);
}

uint64_t CommandQueue::submit(const std::function<void(VkCommandBuffer)>& record, std::vector<HostBuffer> staging,
                              const std::vector<TimelineWait>& waits) {
    const std::lock_guard lock(mutex_);
    retire_completed();
    VkCommandBuffer commands = VK_NULL_HANDLE;
    if (!free_commands_.empty()) {
        commands = free_commands_.back();
        free_commands_.pop_back();
    } else {
        VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        alloc.commandPool = pool_.get();
        alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        alloc.commandBufferCount = 1;
        check_vk(vkAllocateCommandBuffers(device_, &alloc, &commands), "vkAllocateCommandBuffers");
    }
    VkFenceHandle fence;
    try {
        fence = take_fence();
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        check_vk(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
        record(commands);
        check_vk(vkEndCommandBuffer(commands), "vkEndCommandBuffer");

        std::vector<VkSemaphoreSubmitInfo> wait_infos;
        std::vector<TimelineWait> all_waits = pending_waits_;
        all_waits.insert(all_waits.end(), waits.begin(), waits.end());
        for (const TimelineWait& w : all_waits) {
            VkSemaphoreSubmitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
            info.semaphore = w.semaphore;
            info.value = w.value;
            info.stageMask = w.stages;
            wait_infos.push_back(info);
        }
        VkSemaphoreSubmitInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
        signal.semaphore = timeline_.handle();
        signal.value = last_submitted_ + 1;
        signal.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        VkCommandBufferSubmitInfo command_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
        command_info.commandBuffer = commands;
        VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
        submit.waitSemaphoreInfoCount = static_cast<uint32_t>(wait_infos.size());
        submit.pWaitSemaphoreInfos = wait_infos.data();
        submit.commandBufferInfoCount = 1;
        submit.pCommandBufferInfos = &command_info;
        submit.signalSemaphoreInfoCount = 1;
        submit.pSignalSemaphoreInfos = &signal;
        check_vk(vkQueueSubmit2(queue_, 1, &submit, fence.get()), "vkQueueSubmit2");
    } catch (...) {
        vkResetCommandBuffer(commands, 0);
        free_commands_.push_back(commands);
        if (fence) free_fences_.push_back(std::move(fence));
        throw;
    }
    pending_waits_.clear();
    last_submitted_++;
    in_flight_.push_back({last_submitted_, commands, std::move(fence), std::move(staging)});
    return last_submitted_;
}

void CommandQueue::wait(uint64_t value) {
    if (value == 0) return;
    timeline_.wait(value);  // unlocked: other threads submit meanwhile
    const std::lock_guard lock(mutex_);
    // Tell the fences (and so the validation layer) what the timeline already says.
    for (const InFlight& f : in_flight_) {
        if (f.value > value) break;
        const VkFence fence = f.fence.get();
        check_vk(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    }
    retire_completed();
}

}  // namespace tvlm
