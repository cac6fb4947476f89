#include "engine/overlay/overlay_renderer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "engine/core/barriers.h"
#include "engine/core/compute_pipeline.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/overlay/overlay_font.h"
#include "engine/overlay/overlay_scene.h"
#include "shaders/spirv.h"
#include "engine/textures/transfer.h"

namespace tvlm {

namespace {

constexpr VkBufferUsageFlags kStorage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// A buffer of at least `bytes`, kept while it is large enough (draws of similar scenes
// allocate nothing).
void ensure(Context& context, std::optional<GpuBuffer>& buffer, VkDeviceSize bytes) {
    bytes = std::max<VkDeviceSize>(bytes, 16);
    if (!buffer || buffer->size() < bytes) {
        buffer.reset();
        buffer.emplace(context.physical_device(), context.device(), bytes, kStorage);
    }
}

VkDescriptorBufferInfo whole(const std::optional<GpuBuffer>& b) { return {b->handle(), 0, VK_WHOLE_SIZE}; }

}  // namespace

OverlayRenderer::OverlayRenderer(Context& context) : context_(context) {
    const OverlayFont* font = overlay_font();
    const VkDeviceSize bytes = font ? (VkDeviceSize{font->width} * font->height + 3) / 4 * 4 : 16;
    atlas_ = HostBuffer(context.physical_device(), context.device(), bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    if (font) std::memcpy(atlas_.data(), font->sdf, size_t{font->width} * font->height);
}

OverlayRenderer::~OverlayRenderer() {
    if (last_draw_) context_.queue().wait(last_draw_);
}

uint64_t OverlayRenderer::draw(Texture& frame, std::span<const gpu::OverlayShape> shapes) {
    const TextureDesc& d = frame.desc();
    check_overlay_format(d.format, "OverlayRenderer::draw");
    const bool half = d.format == Format::rgba16f;
    if (!frame.words_allowed() || !(frame.usage() & VK_IMAGE_USAGE_STORAGE_BIT))
        throw Error(
            "the overlay's frame must allow storage and word views (VK_IMAGE_USAGE_STORAGE_BIT, "
            "VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT): textures texturevlm creates do");
    const uint32_t tiles_x = (d.width + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE;
    const uint32_t tiles_y = (d.height + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE;
    const uint64_t pairs = overlay_tile_pairs(shapes, d.width, d.height);  // the lists' length
    if (shapes.empty()) return context_.queue().submit([](VkCommandBuffer) {});
    if (last_draw_) context_.queue().wait(last_draw_);

    const VkDeviceSize shape_bytes = shapes.size_bytes();
    if (shapes_.size() < shape_bytes)
        shapes_ = HostBuffer(context_.physical_device(), context_.device(), shape_bytes,
                             VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    std::memcpy(shapes_.data(), shapes.data(), shape_bytes);
    const VkDeviceSize tile_bytes = VkDeviceSize{tiles_x} * tiles_y * sizeof(uint32_t);
    ensure(context_, counts_, tile_bytes);
    ensure(context_, offsets_, tile_bytes + sizeof(uint32_t));
    ensure(context_, cursors_, tile_bytes);
    ensure(context_, lists_, pairs * sizeof(uint32_t));

    const std::vector<VkDescriptorType> five_buffers(5, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER);
    const ComputePipeline& bin = context_.pipeline(
        "overlay_bin",
        {.spirv = shaders::overlay_bin(), .bindings = five_buffers, .push_constant_bytes = sizeof(gpu::OverlayParams)});
    const ComputePipeline& scan = context_.pipeline(
        "overlay_scan", {.spirv = shaders::overlay_scan(),
                         .bindings = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER},
                         .push_constant_bytes = sizeof(gpu::OverlayParams)});
    const ComputePipeline& shade = context_.pipeline(
        half ? "overlay_shade_rgba16f" : "overlay_shade",
        {.spirv = half ? shaders::overlay_shade_rgba16f() : shaders::overlay_shade(),
         .bindings = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                      VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                      VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER},
         .push_constant_bytes = sizeof(gpu::OverlayParams)});
    gpu::OverlayParams params{d.width,
                              d.height,
                              tiles_x,
                              tiles_y,
                              uint32_t(shapes.size()),
                              0,
                              d.format == Format::rgba8_srgb ? 1u : 0u,
                              overlay_font() ? overlay_font()->width : 0u};
    const VkImageView words = frame.level_view(0, LevelAccess::write_words);
    const DispatchGrid per_shape = dispatch_grid(shapes.size());  // a workgroup per shape

    const uint64_t done = context_.queue().submit([&](VkCommandBuffer cmd) {
        const auto between_passes = [&] {
            record_memory_barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT,
                                  VK_ACCESS_2_SHADER_WRITE_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                  VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                                  VK_ACCESS_2_SHADER_READ_BIT | VK_ACCESS_2_SHADER_WRITE_BIT);
        };
        // Earlier draws' reads of these buffers are done before they are cleared.
        record_memory_barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_READ_BIT,
                              VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
        vkCmdFillBuffer(cmd, counts_->handle(), 0, tile_bytes, 0);
        vkCmdFillBuffer(cmd, cursors_->handle(), 0, tile_bytes, 0);
        between_passes();
        const VkDescriptorBufferInfo shape_info{shapes_.handle(), 0, VK_WHOLE_SIZE};
        const VkDescriptorBufferInfo counts = whole(counts_), offsets = whole(offsets_), cursors = whole(cursors_),
                                     lists = whole(lists_);
        const std::array<VkWriteDescriptorSet, 5> bin_writes{
            storage_buffer_write(0, &shape_info), storage_buffer_write(1, &counts), storage_buffer_write(2, &offsets),
            storage_buffer_write(3, &cursors), storage_buffer_write(4, &lists)};
        params.mode = 0;
        bin.bind(cmd, bin_writes, &params);
        vkCmdDispatch(cmd, per_shape.x, per_shape.y, 1);
        between_passes();
        const std::array<VkWriteDescriptorSet, 2> scan_writes{storage_buffer_write(0, &counts),
                                                              storage_buffer_write(1, &offsets)};
        scan.bind(cmd, scan_writes, &params);
        vkCmdDispatch(cmd, 1, 1, 1);
        between_passes();
        params.mode = 1;
        bin.bind(cmd, bin_writes, &params);
        vkCmdDispatch(cmd, per_shape.x, per_shape.y, 1);
        between_passes();
        record_barrier(cmd, {.image = frame.image(),
                             .old_layout = frame.layout(),
                             .new_layout = VK_IMAGE_LAYOUT_GENERAL,
                             .dst_stages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                             .dst_access = VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT});
        frame.set_layout(VK_IMAGE_LAYOUT_GENERAL);
        const VkDescriptorImageInfo image{VK_NULL_HANDLE, words, VK_IMAGE_LAYOUT_GENERAL};
        const VkDescriptorBufferInfo atlas{atlas_.handle(), 0, VK_WHOLE_SIZE};
        const std::array<VkWriteDescriptorSet, 6> shade_writes{
            storage_buffer_write(0, &shape_info),
            storage_buffer_write(1, &counts),
            storage_buffer_write(2, &offsets),
            storage_buffer_write(3, &lists),
            descriptor_write(4, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, &image, nullptr),
            storage_buffer_write(5, &atlas)};
        shade.bind(cmd, shade_writes, &params);
        vkCmdDispatch(cmd, tiles_x, tiles_y, 1);
    });
    frame.mark_used(done);
    last_draw_ = done;
    return done;
}

void draw_overlay_on_host(Context& context, std::span<const gpu::OverlayShape> shapes, std::span<uint8_t> texels,
                          uint32_t width, uint32_t height, Format format) {
    check_overlay_format(format, "draw_overlay_on_host");
    const FormatInfo& info = format_info(format);
    if (texels.size() != size_t{width} * height * info.texel_bytes())
        throw Error("draw_overlay_on_host: the frame holds " + std::to_string(texels.size()) + " bytes, not " +
                    std::to_string(size_t{width} * height * info.texel_bytes()) + " (" + std::string(info.name) +
                    ", tight rows)");
    Texture texture = Texture::create(context, TextureDesc::sampled_2d(width, height, format, 1));
    upload(context, texture, HostPixels{texels.data(), info.component, width, height, 4, 0});
    OverlayRenderer renderer(context);
    context.queue().wait(renderer.draw(texture, shapes));
    const std::vector<uint8_t> drawn = readback(context, texture);
    std::memcpy(texels.data(), drawn.data(), drawn.size());
}

}  // namespace tvlm
