#include "engine/core/device_memory.h"

#include <atomic>
#include <cstdio>
#include <string>
#include <utility>

#include "engine/core/vk_check.h"

namespace tvlm {

namespace {
std::atomic<int64_t> g_live{0};
}

void free_device_memory(VkDevice device, VkDeviceMemory memory, const VkAllocationCallbacks* allocator) {
    vkFreeMemory(device, memory, allocator);
    g_live--;
}

DeviceMemory::DeviceMemory(VkDevice device, VkDeviceMemory memory, VkDeviceSize size, uint32_t type_index)
    : memory_(memory, device), size_(size), type_index_(type_index) {
    if (memory_) g_live++;
}

int64_t DeviceMemory::live_count() { return g_live.load(); }

uint32_t find_memory_type(VkPhysicalDevice physical, uint32_t type_bits, VkMemoryPropertyFlags required) {
    VkPhysicalDeviceMemoryProperties props;
    vkGetPhysicalDeviceMemoryProperties(physical, &props);
    for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
        if ((type_bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & required) == required) return i;
    throw Error("no Vulkan memory type with the required properties (flags " + std::to_string(required) +
                ", allowed types 0x" + std::to_string(type_bits) + ")");
}

namespace {

std::string gib(VkDeviceSize bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(VkDeviceSize{1} << 30));
    return text;
}

// Throws Error where `size` exceeds the heap of memory type `type`: Vulkan forbids asking for
// more than a heap holds (the validation layers report it), so it is refused here, clearly.
void check_fits_heap(VkPhysicalDevice physical, uint32_t type, VkDeviceSize size, const char* what) {
    VkPhysicalDeviceMemoryProperties props;
    vkGetPhysicalDeviceMemoryProperties(physical, &props);
    const VkDeviceSize heap = props.memoryHeaps[props.memoryTypes[type].heapIndex].size;
    if (size > heap)
        throw Error(std::string(what) + " needs " + gib(size) + " of device memory, more than the device's " +
                    gib(heap) + " heap holds: use a smaller image or batch");
}

}  // namespace

DeviceMemory allocate_memory(VkDevice device, VkDeviceSize size, uint32_t type_index, const void* next) {
    VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, next};
    info.allocationSize = size;
    info.memoryTypeIndex = type_index;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    check_vk(vkAllocateMemory(device, &info, nullptr, &memory), "vkAllocateMemory");
    return DeviceMemory(device, memory, size, type_index);
}

BoundBuffer create_bound_buffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage,
                                VkMemoryPropertyFlags properties) {
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    BoundBuffer bound;
    check_vk(vkCreateBuffer(device, &info, nullptr, bound.buffer.create(device)), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, bound.buffer.get(), &req);
    const uint32_t type = find_memory_type(physical, req.memoryTypeBits, properties);
    check_fits_heap(physical, type, req.size, "a buffer");
    bound.memory = allocate_memory(device, req.size, type, nullptr);
    check_vk(vkBindBufferMemory(device, bound.buffer.get(), bound.memory.handle(), 0), "vkBindBufferMemory");
    return bound;
}

DeviceMemory allocate_image_memory(VkPhysicalDevice physical, VkDevice device, VkImage image, bool exportable) {
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(device, image, &req);
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    dedicated.image = image;
    VkExportMemoryAllocateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, &dedicated};
    export_info.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    const uint32_t type = find_memory_type(physical, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    check_fits_heap(physical, type, req.size, "the texture");
    DeviceMemory memory = allocate_memory(
        device, req.size, type,
        exportable ? static_cast<const void*>(&export_info) : static_cast<const void*>(&dedicated));
    check_vk(vkBindImageMemory(device, image, memory.handle(), 0), "vkBindImageMemory");
    return memory;
}

}  // namespace tvlm
