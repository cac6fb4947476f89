// The `blit` mip filter: a vkCmdBlitImage chain with VK_FILTER_LINEAR, each level from the
// one before, all layers at once.
#include <string>

#include "engine/core/barriers.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "engine/textures/texture.h"

namespace tvlm {

namespace {

void check_blit(const Context& context, const Texture& texture) {
    texture.require_usage(VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT, "blit mips");
    const FormatInfo& format = format_info(texture.desc().format);
    VkFormatProperties props;
    vkGetPhysicalDeviceFormatProperties(context.physical_device(), vk_format(texture.desc().format), &props);
    const VkFormatFeatureFlags needed = VK_FORMAT_FEATURE_BLIT_SRC_BIT | VK_FORMAT_FEATURE_BLIT_DST_BIT |
                                        VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT;
    if ((props.optimalTilingFeatures & needed) != needed)
        throw Error("format " + std::string(format.name) + " cannot be blitted with linear filtering on " +
                    context.device_info().name + ": use the box filter");
}

void record_blit(VkCommandBuffer cmd, Texture& texture) {
    const uint32_t levels = texture.levels();
    if (levels == 1) return;
    {
        const VkImage image = texture.image();
        record_barrier(cmd, {.image = image,
                             .old_layout = texture.layout(),
                             .new_layout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                             .dst_stages = VK_PIPELINE_STAGE_2_BLIT_BIT,
                             .dst_access = VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT});
        for (uint32_t level = 1; level < levels; ++level) {
            // Level-1 was just written (or uploaded): make it the blit source.
            record_barrier(cmd, {.image = image,
                                 .old_layout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                 .new_layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                 .src_stages = VK_PIPELINE_STAGE_2_BLIT_BIT,
                                 .src_access = VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                 .dst_stages = VK_PIPELINE_STAGE_2_BLIT_BIT,
                                 .dst_access = VK_ACCESS_2_TRANSFER_READ_BIT,
                                 .base_level = level - 1,
                                 .level_count = 1});
            const Extent2D src = texture.extent(level - 1), dst = texture.extent(level);
            VkImageBlit2 region{VK_STRUCTURE_TYPE_IMAGE_BLIT_2};
            region.srcSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, level - 1, 0, texture.desc().layers};
            region.srcOffsets[1] = {static_cast<int32_t>(src.width), static_cast<int32_t>(src.height), 1};
            region.dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, level, 0, texture.desc().layers};
            region.dstOffsets[1] = {static_cast<int32_t>(dst.width), static_cast<int32_t>(dst.height), 1};
            VkBlitImageInfo2 blit{VK_STRUCTURE_TYPE_BLIT_IMAGE_INFO_2};
            blit.srcImage = image;
            blit.srcImageLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
            blit.dstImage = image;
            blit.dstImageLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
            blit.regionCount = 1;
            blit.pRegions = &region;
            blit.filter = VK_FILTER_LINEAR;
            vkCmdBlitImage2(cmd, &blit);
        }
        // Levels 0..n-2 are blit sources, level n-1 the last destination: all to sampling.
        record_barrier(cmd, {.image = image,
                             .old_layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                             .new_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                             .src_stages = VK_PIPELINE_STAGE_2_BLIT_BIT,
                             .src_access = VK_ACCESS_2_NONE,
                             .base_level = 0,
                             .level_count = levels - 1});
        record_barrier(cmd, {.image = image,
                             .old_layout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                             .new_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                             .src_stages = VK_PIPELINE_STAGE_2_BLIT_BIT,
                             .src_access = VK_ACCESS_2_TRANSFER_WRITE_BIT,
                             .base_level = levels - 1,
                             .level_count = 1});
        texture.set_layout(VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
    }
}

}  // namespace

uint64_t generate_mips_blit(Context& context, Texture& texture) {
    check_blit(context, texture);
    if (texture.levels() == 1) return context.queue().last_submitted();
    const uint64_t done = context.queue().submit([&](VkCommandBuffer cmd) { record_blit(cmd, texture); });
    texture.mark_used(done);
    return done;
}

void record_mips_blit(Context& context, VkCommandBuffer cmd, Texture& texture) {
    check_blit(context, texture);
    record_blit(cmd, texture);
}

}  // namespace tvlm
