#pragma once
// Image layout transitions with synchronization2 barriers.
#include "engine/core/vulkan.h"

namespace tvlm {

struct ImageBarrier {
    VkImage image = VK_NULL_HANDLE;
    VkImageLayout old_layout = VK_IMAGE_LAYOUT_UNDEFINED, new_layout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkPipelineStageFlags2 src_stages = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    VkAccessFlags2 src_access = VK_ACCESS_2_MEMORY_WRITE_BIT;
    VkPipelineStageFlags2 dst_stages = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    VkAccessFlags2 dst_access = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
    uint32_t base_level = 0, level_count = VK_REMAINING_MIP_LEVELS;
    uint32_t src_queue_family = VK_QUEUE_FAMILY_IGNORED, dst_queue_family = VK_QUEUE_FAMILY_IGNORED;
};

void record_barrier(VkCommandBuffer commands, const ImageBarrier& barrier);

// A global memory barrier (buffers): src stages/accesses before, dst after.
void record_memory_barrier(VkCommandBuffer commands, VkPipelineStageFlags2 src_stages, VkAccessFlags2 src_access,
                           VkPipelineStageFlags2 dst_stages, VkAccessFlags2 dst_access);

// Around a compute dispatch that writes a storage buffer: earlier reads and writes of the
// buffer finish before it (before), and its writes become visible to later commands and
// to the host (after).
void record_compute_output_before(VkCommandBuffer commands);
void record_compute_output_after(VkCommandBuffer commands);

}  // namespace tvlm
