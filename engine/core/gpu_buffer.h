#pragma once
// Move-only device-local buffer (not host-visible): where GPU work writes outputs that
// stay on the GPU, e.g. patch tensors in benchmarks.
#include "engine/core/device_memory.h"
#include "engine/core/vulkan.h"

namespace tvlm {

class GpuBuffer {
public:
    GpuBuffer() = default;
    GpuBuffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage);
    GpuBuffer(GpuBuffer&& other) noexcept;
    GpuBuffer& operator=(GpuBuffer&&) = delete;
    GpuBuffer(const GpuBuffer&) = delete;
    GpuBuffer& operator=(const GpuBuffer&) = delete;
    ~GpuBuffer();

    VkBuffer handle() const { return buffer_; }
    VkDeviceSize size() const { return size_; }

private:
    VkDevice device_ = VK_NULL_HANDLE;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    DeviceMemory memory_;
    VkDeviceSize size_ = 0;
};

}  // namespace tvlm
