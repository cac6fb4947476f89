#pragma once
// Move-only owner of a Vulkan timeline semaphore, optionally exportable as an opaque fd
// (the handle CUDA imports to wait on and signal the same timeline).
#include <cstdint>

#include "engine/core/unique_fd.h"
#include "engine/core/vk_handle.h"

namespace tvlm {

// A new opaque fd for `semaphore` (created exportable as one); the caller owns it until an
// import takes it. Throws Error naming what the semaphore was created without.
UniqueFd export_semaphore_fd(VkDevice device, VkSemaphore semaphore);

class TimelineSemaphore {
public:
    TimelineSemaphore() = default;
    TimelineSemaphore(VkDevice device, uint64_t initial_value, bool exportable);

    VkSemaphore handle() const { return semaphore_.get(); }
    bool exportable() const { return exportable_; }
    uint64_t value() const;       // current counter value
    void signal(uint64_t value);  // host signal
    // Host wait until the counter reaches value; throws Error on timeout or device loss.
    void wait(uint64_t value, uint64_t timeout_ns = UINT64_MAX) const;
    // A new fd for the semaphore each call; the caller owns it until an import takes it.
    UniqueFd export_fd() const;

private:
    VkDevice device_ = VK_NULL_HANDLE;
    VkSemaphoreHandle semaphore_;
    bool exportable_ = false;
};

}  // namespace tvlm
