// The `box` mip filter on the GPU: the single-pass downsampler (shaders/box_mips.comp),
// a few dispatches per chain (box_filter.h plans them), all layers in each dispatch.
#include <array>
#include <string>
#include <utility>

#include "engine/core/barriers.h"
#include "engine/mips/box_filter.h"
#include "engine/core/compute_pipeline.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "shaders/shader_params.h"
#include "shaders/spirv.h"
#include "engine/textures/texture.h"

namespace tvlm {

std::string box_unsupported(const Context& context, Format format) {
    const FormatInfo& info = format_info(format);
    if (!context.float64())
        return context.device_info().name + " has no shaderFloat64, which the box filter's exact arithmetic needs";
    // Levels are read and written in their stored encoding: sRGB through UNORM views.
    VkFormatProperties props;
    vkGetPhysicalDeviceFormatProperties(context.physical_device(),
                                        info.srgb ? VK_FORMAT_R8G8B8A8_UNORM : vk_format(format), &props);
    const VkFormatFeatureFlags needed = VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT | VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT;
    if ((props.optimalTilingFeatures & needed) != needed)
        return "format " + std::string(info.name) + " cannot be read and stored by compute shaders on " +
               context.device_info().name;
    return {};
}

MipFilter default_mip_filter(const Context& context, Format format) {
    return box_unsupported(context, format).empty() ? MipFilter::box : MipFilter::blit;
}

namespace {

void check_box(const Context& context, const Texture& texture) {
    texture.require_usage(VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT, "box mips (compute)");
    if (const std::string why = box_unsupported(context, texture.desc().format); !why.empty())
        throw Error(why + ": use the blit filter");
}

// The chain's last passes run as one workgroup (box_mips.comp's tail): level a+1 in the
// general shader's tile in shared memory, a+2 in its second array, six levels at most.
constexpr BoxTailLimits kTailLimits{TVLM_BOX_TILE * TVLM_BOX_TILE, TVLM_BOX_TILE* TVLM_BOX_TILE / 4,
                                    TVLM_BOX_MAX_LEVELS};

void record_box_passes(Context& context, VkCommandBuffer cmd, Texture& texture, TexelRect dirty, uint32_t first_layer,
                       uint32_t layers) {
    const uint32_t levels = texture.levels();
    if (levels == 1) return;
    std::vector<BoxPass> passes = plan_box_passes(texture.desc().width, texture.desc().height, levels, dirty);
    // The tail rewrites its levels whole, whatever part of them depends on `dirty`.
    const size_t tail = first_box_tail_pass(texture.desc().width, texture.desc().height, levels, passes, kTailLimits);
    if (tail < passes.size()) {
        const uint32_t a = passes[tail].src_level;
        passes.resize(tail);
        passes.push_back({.src_level = a, .levels = levels - 1 - a, .tiles_x = 1, .tiles_y = 1});
    }

    std::vector<VkDescriptorType> bindings(2 + TVLM_BOX_MAX_LEVELS, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE);
    bindings.front() = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    bindings.back() = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    const VkDescriptorBufferInfo tables{context.constant_buffer("srgb8_tables", srgb8_tables()).handle(), 0,
                                        VK_WHOLE_SIZE};
    const ComputePipeline& general = context.pipeline(
        "box_mips",
        {.spirv = shaders::box_mips(), .bindings = bindings, .push_constant_bytes = sizeof(gpu::BoxMipsParams)});
    // RGBA8, sRGB8 and RGBA16F levels that halve: texels as words (box_mips_words.glsl), 2x2
    // of them read per textureGather through word views, quads of invocations sharing their
    // averages. Where the texture allows no such views (an application's image made without
    // MUTABLE_FORMAT) or the device no full subgroups with quads and shuffles, the general
    // shader runs.
    const uint32_t kind = box_kind(texture.desc().format);
    const bool words = kind != TVLM_BOX_FLOAT32 && texture.words_allowed() && context.subgroup_shuffles();
    const ComputePipeline* packed = nullptr;
    if (words) {
        const auto [packed_name,
                    packed_spirv] = kind == TVLM_BOX_UNORM8  ? std::pair{"box_mips_rgba8", shaders::box_mips_rgba8()}
                                    : kind == TVLM_BOX_SRGB8 ? std::pair{"box_mips_srgb8", shaders::box_mips_srgb8()}
                                    : context.ieee_float16()
                                        ? std::pair{"box_mips_rgba16f_rte", shaders::box_mips_rgba16f_rte()}
                                        : std::pair{"box_mips_rgba16f", shaders::box_mips_rgba16f()};
        packed = &context.pipeline(packed_name, {.spirv = packed_spirv,
                                                 .bindings = bindings,
                                                 .push_constant_bytes = sizeof(gpu::BoxMipsParams),
                                                 .full_subgroups = true});
    }
    // Views are made before recording: they live as long as the texture.
    std::vector<std::array<VkImageView, 2>> views(levels), word_views(words ? levels : 0);
    for (uint32_t l = 0; l < levels; ++l) {
        views[l] = {texture.level_view(l, LevelAccess::read), texture.level_view(l, LevelAccess::write)};
        if (words)
            word_views[l] = {texture.level_view(l, LevelAccess::read_words),
                             texture.level_view(l, LevelAccess::write_words)};
    }

    {
        // GENERAL: levels are written as storage images, then read by the next pass.
        record_barrier(cmd, {.image = texture.image(),
                             .old_layout = texture.layout(),
                             .new_layout = VK_IMAGE_LAYOUT_GENERAL,
                             .dst_stages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                             .dst_access = VK_ACCESS_2_SHADER_SAMPLED_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT});
        for (size_t i = 0; i < passes.size(); ++i) {
            const BoxPass& pass = passes[i];
            const Extent2D src = texture.extent(pass.src_level);
            const uint32_t is_tail = i == tail ? 1 : 0;
            const gpu::BoxMipsParams params{src.width,   src.height,  pass.levels, kind,
                                            pass.tile_x, pass.tile_y, first_layer, is_tail};
            const bool packs = !is_tail && words && src.width % 2 == 0 && src.height % 2 == 0;
            const auto& pass_views = packs ? word_views : views;
            std::array<VkDescriptorImageInfo, 1 + TVLM_BOX_MAX_LEVELS> infos{};
            infos[0] = {context.point_sampler(), pass_views[pass.src_level][0], VK_IMAGE_LAYOUT_GENERAL};
            for (uint32_t j = 1; j <= TVLM_BOX_MAX_LEVELS; ++j) {
                // Slots past this pass's levels are never written; they repeat its first level.
                const uint32_t level = pass.src_level + (j <= pass.levels ? j : 1);
                infos[j] = {VK_NULL_HANDLE, pass_views[level][1], VK_IMAGE_LAYOUT_GENERAL};
            }
            std::array<VkWriteDescriptorSet, 2 + TVLM_BOX_MAX_LEVELS> writes{};
            for (uint32_t b = 0; b < writes.size(); ++b)
                writes[b] = b < infos.size() ? descriptor_write(b, bindings[b], &infos[b], nullptr)
                                             : descriptor_write(b, bindings[b], nullptr, &tables);
            (packs ? *packed : general).bind(cmd, writes, &params);
            vkCmdDispatch(cmd, pass.tiles_x, pass.tiles_y, layers);
            // This pass's writes become the next pass's reads.
            record_barrier(cmd, {.image = texture.image(),
                                 .old_layout = VK_IMAGE_LAYOUT_GENERAL,
                                 .new_layout = VK_IMAGE_LAYOUT_GENERAL,
                                 .src_stages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                                 .src_access = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                                 .dst_stages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                                 .dst_access = VK_ACCESS_2_SHADER_SAMPLED_READ_BIT});
        }
        record_barrier(cmd, {.image = texture.image(),
                             .old_layout = VK_IMAGE_LAYOUT_GENERAL,
                             .new_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                             .src_stages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                             .src_access = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT});
        texture.set_layout(VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
    }
}

uint64_t submit_box(Context& context, Texture& texture, TexelRect dirty, uint32_t first_layer, uint32_t layers) {
    if (texture.levels() == 1) return context.queue().last_submitted();
    const uint64_t done = context.queue().submit(
        [&](VkCommandBuffer cmd) { record_box_passes(context, cmd, texture, dirty, first_layer, layers); });
    texture.mark_used(done);
    return done;
}

TexelRect whole(const TextureDesc& desc) { return {0, 0, desc.width, desc.height}; }

}  // namespace

uint64_t generate_mips_box(Context& context, Texture& texture) {
    check_box(context, texture);
    return submit_box(context, texture, whole(texture.desc()), 0, texture.desc().layers);
}

uint64_t update_mips(Context& context, Texture& texture, const DirtyRegion& region) {
    check_box(context, texture);
    const TextureDesc& desc = texture.desc();
    const TexelRect dirty = checked_dirty_rect(region, desc.width, desc.height, desc.layers);
    return submit_box(context, texture, dirty, region.first_layer, region.layers);
}

void record_mips_box(Context& context, VkCommandBuffer cmd, Texture& texture) {
    check_box(context, texture);
    record_box_passes(context, cmd, texture, whole(texture.desc()), 0, texture.desc().layers);
}

void record_mips_update(Context& context, VkCommandBuffer cmd, Texture& texture, const DirtyRegion& region) {
    check_box(context, texture);
    const TextureDesc& desc = texture.desc();
    record_box_passes(context, cmd, texture, checked_dirty_rect(region, desc.width, desc.height, desc.layers),
                      region.first_layer, region.layers);
}

}  // namespace tvlm
