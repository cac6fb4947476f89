#pragma once
// Move-only host-visible, coherent, persistently mapped buffer: staging for uploads and
// readbacks.
#include <cstddef>
#include <memory>

#include "engine/core/device_memory.h"
#include "engine/core/vulkan.h"

namespace tvlm {

class HostBuffer {
public:
    HostBuffer() = default;
    HostBuffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage);

    VkBuffer handle() const { return bound_.buffer.get(); }
    VkDeviceSize size() const { return size_; }
    std::byte* data() const { return mapped_.get(); }

private:
    struct Unmapped {  // the mapping ends with the memory (vkFreeMemory unmaps)
        void operator()(std::byte*) const {}
    };
    BoundBuffer bound_;
    VkDeviceSize size_ = 0;
    std::unique_ptr<std::byte, Unmapped> mapped_;  // null once moved from
};

}  // namespace tvlm
