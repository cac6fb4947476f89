#include "engine/core/gpu_buffer.h"

namespace tvlm {

GpuBuffer::GpuBuffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage)
    : bound_(create_bound_buffer(physical, device, size, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)), size_(size) {}

}  // namespace tvlm
