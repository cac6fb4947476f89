#include "engine/core/barriers.h"

namespace tvlm {

void record_barrier(VkCommandBuffer commands, const ImageBarrier& b) {
    VkImageMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
    barrier.srcStageMask = b.src_stages;
    barrier.srcAccessMask = b.src_access;
    barrier.dstStageMask = b.dst_stages;
    barrier.dstAccessMask = b.dst_access;
    barrier.oldLayout = b.old_layout;
    barrier.newLayout = b.new_layout;
    barrier.srcQueueFamilyIndex = b.src_queue_family;
    barrier.dstQueueFamilyIndex = b.dst_queue_family;
    barrier.image = b.image;
    barrier.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, b.base_level, b.level_count, 0, VK_REMAINING_ARRAY_LAYERS};
    VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dependency.imageMemoryBarrierCount = 1;
    dependency.pImageMemoryBarriers = &barrier;
    vkCmdPipelineBarrier2(commands, &dependency);
}

void record_memory_barrier(VkCommandBuffer commands, VkPipelineStageFlags2 src_stages, VkAccessFlags2 src_access,
                           VkPipelineStageFlags2 dst_stages, VkAccessFlags2 dst_access) {
    VkMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    barrier.srcStageMask = src_stages;
    barrier.srcAccessMask = src_access;
    barrier.dstStageMask = dst_stages;
    barrier.dstAccessMask = dst_access;
    VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dependency.memoryBarrierCount = 1;
    dependency.pMemoryBarriers = &barrier;
    vkCmdPipelineBarrier2(commands, &dependency);
}

void record_compute_output_before(VkCommandBuffer commands) {
    record_memory_barrier(commands, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                          VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT,
                          VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
}

void record_compute_output_after(VkCommandBuffer commands) {
    record_memory_barrier(commands, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                          VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_2_HOST_BIT,
                          VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_HOST_READ_BIT);
}

}  // namespace tvlm
