#include "gpu_buffer.h"

#include <utility>

#include "vk_check.h"

namespace tvlm {

GpuBuffer::GpuBuffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage)
    : device_(device), size_(size) {
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check_vk(vkCreateBuffer(device_, &info, nullptr, &buffer_), "vkCreateBuffer");
    try {
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(device_, buffer_, &req);
        memory_ = allocate_memory(device_, req.size,
                                  find_memory_type(physical, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT),
                                  nullptr);
        check_vk(vkBindBufferMemory(device_, buffer_, memory_.handle(), 0), "vkBindBufferMemory");
    } catch (...) {
        vkDestroyBuffer(device_, buffer_, nullptr);
        throw;
    }
}

GpuBuffer::GpuBuffer(GpuBuffer&& other) noexcept
    : device_(other.device_), buffer_(std::exchange(other.buffer_, VK_NULL_HANDLE)),
      memory_(std::move(other.memory_)), size_(other.size_) {}

GpuBuffer::~GpuBuffer() {
    if (buffer_) vkDestroyBuffer(device_, buffer_, nullptr);
}

}  // namespace tvlm
