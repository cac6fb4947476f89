#pragma once
// Move-only device-local buffer (not host-visible): where GPU work writes outputs that
// stay on the GPU, e.g. patch tensors in benchmarks.
#include "engine/core/device_memory.h"
#include "engine/core/vk_handle.h"

namespace tvlm {

class GpuBuffer {
public:
    GpuBuffer() = default;
    GpuBuffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage);

    VkBuffer handle() const { return bound_.buffer.get(); }
    VkDeviceSize size() const { return size_; }

private:
    BoundBuffer bound_;
    VkDeviceSize size_ = 0;
};

}  // namespace tvlm
