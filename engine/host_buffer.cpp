#include "host_buffer.h"

#include <utility>

#include "vk_check.h"

namespace tvlm {

HostBuffer::HostBuffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage)
    : device_(device), size_(size) {
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check_vk(vkCreateBuffer(device_, &info, nullptr, &buffer_), "vkCreateBuffer");
    try {
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(device_, buffer_, &req);
        const uint32_t type = find_memory_type(physical, req.memoryTypeBits,
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        memory_ = allocate_memory(device_, req.size, type, nullptr);
        check_vk(vkBindBufferMemory(device_, buffer_, memory_.handle(), 0), "vkBindBufferMemory");
        void* mapped = nullptr;
        check_vk(vkMapMemory(device_, memory_.handle(), 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
        mapped_ = static_cast<std::byte*>(mapped);
    } catch (...) {
        destroy();
        throw;
    }
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : device_(other.device_), buffer_(std::exchange(other.buffer_, VK_NULL_HANDLE)),
      memory_(std::move(other.memory_)), size_(other.size_), mapped_(std::exchange(other.mapped_, nullptr)) {}

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
