#include "engine/core/gpu_buffer.h"

#include <utility>


namespace tvlm {

GpuBuffer::GpuBuffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage)
    : device_(device), size_(size) {
    BoundBuffer bound = create_bound_buffer(physical, device, size, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    buffer_ = bound.buffer;
    memory_ = std::move(bound.memory);
}

GpuBuffer::GpuBuffer(GpuBuffer&& other) noexcept
    : device_(other.device_),
      buffer_(std::exchange(other.buffer_, VK_NULL_HANDLE)),
      memory_(std::move(other.memory_)),
      size_(other.size_) {}

GpuBuffer::~GpuBuffer() {
    if (buffer_) vkDestroyBuffer(device_, buffer_, nullptr);
}

}  // namespace tvlm
