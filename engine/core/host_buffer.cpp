#include "engine/core/host_buffer.h"

#include "engine/core/vk_check.h"

namespace tvlm {

HostBuffer::HostBuffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage)
    : bound_(create_bound_buffer(physical, device, size, usage,
                                 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)),
      size_(size) {
    void* mapped = nullptr;
    check_vk(vkMapMemory(device, bound_.memory.handle(), 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
    mapped_.reset(static_cast<std::byte*>(mapped));
}

}  // namespace tvlm
