#include "command_queue.h"

#include <algorithm>

#include "vk_check.h"

namespace tvlm {

CommandQueue::CommandQueue(VkDevice device, uint32_t family, bool exportable_timeline)
    : device_(device), family_(family), timeline_(device, 0, exportable_timeline) {
    vkGetDeviceQueue(device_, family_, 0, &queue_);
    VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    info.queueFamilyIndex = family_;
    check_vk(vkCreateCommandPool(device_, &info, nullptr, &pool_), "vkCreateCommandPool");
}

CommandQueue::~CommandQueue() {
    try {
        wait(last_submitted_);
    } catch (const Error&) {
        // Device lost during teardown: nothing left to wait for; free what we own.
    }
    in_flight_.clear();
    vkDestroyCommandPool(device_, pool_, nullptr);  // frees every command buffer
}

void CommandQueue::retire_completed() {
    if (in_flight_.empty()) return;
    const uint64_t done = timeline_.value();
    // Observe completion through vkWaitSemaphores too (timeout 0, already reached): the
    // validation layer (1.3.239) retires submissions synchronously there but only
    // asynchronously after vkGetSemaphoreCounterValue, and would then report reusing a
    // finished command buffer as "in use" (seen on the H200, never on lavapipe).
    if (done > 0) timeline_.wait(done, 0);
    auto it = std::partition(in_flight_.begin(), in_flight_.end(),
                             [done](const InFlight& f) { return f.value > done; });
    for (auto r = it; r != in_flight_.end(); ++r) {
        vkResetCommandBuffer(r->commands, 0);
        free_commands_.push_back(r->commands);
    }
    in_flight_.erase(it, in_flight_.end());
}

uint64_t CommandQueue::submit(const std::function<void(VkCommandBuffer)>& record,
                              std::vector<HostBuffer> staging, const std::vector<TimelineWait>& waits) {
    retire_completed();
    VkCommandBuffer commands = VK_NULL_HANDLE;
    if (!free_commands_.empty()) {
        commands = free_commands_.back();
        free_commands_.pop_back();
    } else {
        VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        alloc.commandPool = pool_;
        alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        alloc.commandBufferCount = 1;
        check_vk(vkAllocateCommandBuffers(device_, &alloc, &commands), "vkAllocateCommandBuffers");
    }
    try {
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
        check_vk(vkQueueSubmit2(queue_, 1, &submit, VK_NULL_HANDLE), "vkQueueSubmit2");
    } catch (...) {
        vkResetCommandBuffer(commands, 0);
        free_commands_.push_back(commands);
        throw;
    }
    pending_waits_.clear();
    last_submitted_++;
    in_flight_.push_back({last_submitted_, commands, std::move(staging)});
    return last_submitted_;
}

void CommandQueue::wait(uint64_t value) {
    if (value == 0) return;
    timeline_.wait(value);
    retire_completed();
}

}  // namespace tvlm
