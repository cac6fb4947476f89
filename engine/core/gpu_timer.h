#pragma once
// Move-only owner of a two-timestamp query pool: GPU time of the commands recorded
// between begin() and end() of one submission, for benchmarks.
#include "engine/core/vk_handle.h"

namespace tvlm {

class Context;

class GpuTimer {
public:
    explicit GpuTimer(Context& context);  // throws Error where the queue has no timestamps

    void begin(VkCommandBuffer cmd) const;  // resets the pool and writes the first stamp
    void end(VkCommandBuffer cmd) const;
    // Milliseconds between the stamps; call after the submission completed.
    double milliseconds() const;

private:
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueryPoolHandle pool_;
    double period_ns_ = 1.0;
};

}  // namespace tvlm
