#pragma once
// Move-only host-visible, coherent, persistently mapped buffer: staging for uploads and
// readbacks.
#include <cstddef>

#include "engine/core/device_memory.h"
#include "engine/core/vulkan.h"

namespace tvlm {

class HostBuffer {
public:
    HostBuffer() = default;
    HostBuffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage);
    HostBuffer(HostBuffer&& other) noexcept;
    HostBuffer& operator=(HostBuffer&& other) noexcept;
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;
    ~HostBuffer();

    VkBuffer handle() const { return buffer_; }
    VkDeviceSize size() const { return size_; }
    std::byte* data() const { return mapped_; }

private:
    void destroy();
    VkDevice device_ = VK_NULL_HANDLE;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    DeviceMemory memory_;
    VkDeviceSize size_ = 0;
    std::byte* mapped_ = nullptr;
};

}  // namespace tvlm
