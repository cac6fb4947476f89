#include "engine/core/host_buffer.h"

#include <utility>

#include "engine/core/vk_check.h"

namespace tvlm {

HostBuffer::HostBuffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage)
    : device_(device), size_(size) {
    BoundBuffer bound = create_bound_buffer(physical, device, size, usage,
                                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    buffer_ = bound.buffer;
    memory_ = std::move(bound.memory);
    try {
        void* mapped = nullptr;
        check_vk(vkMapMemory(device_, memory_.handle(), 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
        mapped_ = static_cast<std::byte*>(mapped);
    } catch (...) {
        destroy();
        throw;
    }
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : device_(other.device_),
      buffer_(std::exchange(other.buffer_, VK_NULL_HANDLE)),
      memory_(std::move(other.memory_)),
      size_(other.size_),
      mapped_(std::exchange(other.mapped_, nullptr)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
    if (this != &other) {
        destroy();
        device_ = other.device_;
        buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
        memory_ = std::move(other.memory_);
        size_ = other.size_;
        mapped_ = std::exchange(other.mapped_, nullptr);
    }
    return *this;
}

HostBuffer::~HostBuffer() { destroy(); }

void HostBuffer::destroy() {
    if (buffer_) vkDestroyBuffer(device_, buffer_, nullptr);
    buffer_ = VK_NULL_HANDLE;
    memory_ = DeviceMemory();  // unmapped implicitly by vkFreeMemory
    mapped_ = nullptr;
}

}  // namespace tvlm
