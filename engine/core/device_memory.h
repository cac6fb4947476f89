#pragma once
// Move-only owner of a VkDeviceMemory, with a process-wide count of live allocations
// (tests use it to prove that creating and destroying textures leaks nothing).
#include <cstdint>

#include "engine/core/vk_handle.h"

namespace tvlm {

// vkFreeMemory, counted for live_count().
void free_device_memory(VkDevice device, VkDeviceMemory memory, const VkAllocationCallbacks* allocator);

class DeviceMemory {
public:
    DeviceMemory() = default;
    // Takes ownership of an allocation made with vkAllocateMemory.
    DeviceMemory(VkDevice device, VkDeviceMemory memory, VkDeviceSize size, uint32_t type_index);

    VkDeviceMemory handle() const { return memory_.get(); }
    VkDeviceSize size() const { return size_; }
    uint32_t type_index() const { return type_index_; }

    static int64_t live_count();

private:
    VkHandle<VkDeviceMemory, free_device_memory> memory_;
    VkDeviceSize size_ = 0;
    uint32_t type_index_ = 0;
};

// First memory type allowed by type_bits that has all `required` properties; throws Error.
uint32_t find_memory_type(VkPhysicalDevice physical, uint32_t type_bits, VkMemoryPropertyFlags required);

// vkAllocateMemory with `next` chained (dedicated / export / import infos).
DeviceMemory allocate_memory(VkDevice device, VkDeviceSize size, uint32_t type_index, const void* next);

// One dedicated device-local allocation for `image`, bound to it at offset 0; `exportable`:
// exportable as an opaque fd (the image created with VkExternalMemoryImageCreateInfo), as
// CUDA imports images: whole, at offset 0. What texturevlm's textures do, and what an
// application that wants its images mapped by CUDA does (docs/cpp.md).
DeviceMemory allocate_image_memory(VkPhysicalDevice physical, VkDevice device, VkImage image, bool exportable);

// A new buffer bound to its own memory of the first type with `properties`: the step
// HostBuffer and GpuBuffer share. The caller owns both;
// on failure nothing is left behind.
struct BoundBuffer {
    DeviceMemory memory;  // declared first: freed after the buffer
    VkBufferHandle buffer;
};
BoundBuffer create_bound_buffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage,
                                VkMemoryPropertyFlags properties);

}  // namespace tvlm
