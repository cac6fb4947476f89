// The `box` mip filter on the GPU: one compute dispatch per level (shaders/box_downsample.comp),
// all layers in the same dispatch.
#include <array>
#include <string>

#include "barriers.h"
#include "context.h"
#include "error.h"
#include "generate_mips.h"
#include "shader_params.h"
#include "spirv.h"
#include "texture.h"

namespace tvlm {

namespace {

uint32_t groups(uint32_t n) { return (n + TVLM_BOX_GROUP_SIZE - 1) / TVLM_BOX_GROUP_SIZE; }

}  // namespace

uint64_t generate_mips_box(Context& context, Texture& texture) {
    const FormatInfo& format = format_info(texture.desc().format);
    const VkFormat storage_format = format.srgb ? VK_FORMAT_R8G8B8A8_UNORM : format.vk_format;
    VkFormatProperties sampled_props, storage_props;
    vkGetPhysicalDeviceFormatProperties(context.physical_device(), format.vk_format, &sampled_props);
    vkGetPhysicalDeviceFormatProperties(context.physical_device(), storage_format, &storage_props);
    if (!(sampled_props.optimalTilingFeatures & VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT) ||
        !(storage_props.optimalTilingFeatures & VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT))
        throw Error("format " + std::string(format.name) + " cannot be sampled and stored by compute shaders on " +
                    context.device_info().name + ": use the blit filter");
    const uint32_t levels = texture.levels();
    if (levels == 1) return context.queue().last_submitted();

    const ComputePipeline& pipeline = context.pipeline("box_downsample", {
        .spirv = shaders::box_downsample(),
        .bindings = {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE},
        .push_constant_bytes = sizeof(gpu::BoxDownsampleParams)});
    // Views are made before recording: they live as long as the texture.
    std::vector<std::array<VkImageView, 2>> views(levels);
    for (uint32_t l = 0; l < levels; ++l) views[l] = {texture.level_view(l, false), texture.level_view(l, true)};

    const uint64_t done = context.queue().submit([&](VkCommandBuffer cmd) {
        // GENERAL: each level is written as a storage image, then read by the next dispatch.
        record_barrier(cmd, {.image = texture.image(), .old_layout = texture.layout(),
                             .new_layout = VK_IMAGE_LAYOUT_GENERAL,
                             .dst_stages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                             .dst_access = VK_ACCESS_2_SHADER_SAMPLED_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT});
        for (uint32_t level = 1; level < levels; ++level) {
            const Extent2D src = texture.extent(level - 1), dst = texture.extent(level);
            const gpu::BoxDownsampleParams params{src.width, src.height, dst.width, dst.height,
                                                  format.srgb ? 1u : 0u,
                                                  format.component == ComponentType::u8 ? 1u : 0u};
            VkDescriptorImageInfo src_info{context.point_sampler(), views[level - 1][0], VK_IMAGE_LAYOUT_GENERAL};
            VkDescriptorImageInfo dst_info{VK_NULL_HANDLE, views[level][1], VK_IMAGE_LAYOUT_GENERAL};
            std::array<VkWriteDescriptorSet, 2> writes{};
            writes[0] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
            writes[0].dstBinding = 0;
            writes[0].descriptorCount = 1;
            writes[0].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
            writes[0].pImageInfo = &src_info;
            writes[1] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
            writes[1].dstBinding = 1;
            writes[1].descriptorCount = 1;
            writes[1].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
            writes[1].pImageInfo = &dst_info;
            pipeline.bind(cmd, writes, &params);
            vkCmdDispatch(cmd, groups(dst.width), groups(dst.height), texture.desc().layers);
            // This level's writes become the next dispatch's reads.
            record_barrier(cmd, {.image = texture.image(), .old_layout = VK_IMAGE_LAYOUT_GENERAL,
                                 .new_layout = VK_IMAGE_LAYOUT_GENERAL,
                                 .src_stages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                                 .src_access = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                                 .dst_stages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                                 .dst_access = VK_ACCESS_2_SHADER_SAMPLED_READ_BIT,
                                 .base_level = level, .level_count = 1});
        }
        record_barrier(cmd, {.image = texture.image(), .old_layout = VK_IMAGE_LAYOUT_GENERAL,
                             .new_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                             .src_stages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                             .src_access = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT});
        texture.set_layout(VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
    });
    texture.mark_used(done);
    return done;
}

}  // namespace tvlm
