#include "engine/video/video_texture.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "engine/core/barriers.h"
#include "engine/core/compute_pipeline.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "shaders/shader_params.h"
#include "shaders/spirv.h"

namespace tvlm {

namespace {

Format checked_format(Format format) {
    if (format != Format::rgba8_unorm && format != Format::rgba8_srgb)
        throw Error(std::string("a video texture holds RGBA8 frames (rgba8 or rgba8_srgb), not ") +
                    std::string(format_info(format).name) + ": decoders give RGBA8");
    return format;
}

HostBuffer frame_buffer(Context& context, VkDeviceSize bytes) {
    // The shader indexes frame words with 32 bits.
    if (bytes / 4 > UINT32_MAX) throw Error("a video frame of " + std::to_string(bytes) + " bytes is above 16 GiB");
    return HostBuffer(context.physical_device(), context.device(), bytes,
                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
}

}  // namespace

VideoTexture::VideoTexture(Context& context, uint32_t width, uint32_t height, Format format, ChangeDetection detection,
                           uint32_t layers)
    : context_(context),
      detection_(checked(detection)),
      texture_(Texture::create(context, TextureDesc::sampled_array(width, height, layers, checked_format(format)))),
      grid_{width, height, layers} {
    const std::string why = box_unsupported(context, format);
    if (!why.empty()) throw Error("a video texture needs the box mip filter: " + why);
    const VkDeviceSize bytes = VkDeviceSize{width} * height * layers * 4;
    staging_[0] = frame_buffer(context, bytes);
    staging_[1] = frame_buffer(context, bytes);
    changed_tiles_ = HostBuffer(context.physical_device(), context.device(), grid_.tile_count() * sizeof(uint32_t),
                                VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
}

VideoTexture::~VideoTexture() {
    try {
        context_.queue().wait(std::max(staging_done_[0], staging_done_[1]));
    } catch (...) {  // a lost device: nothing left to wait for
    }
}

std::span<std::byte> VideoTexture::next_frame() {
    const size_t k = frames_ % 2;
    context_.queue().wait(staging_done_[k]);
    staged_ = true;
    return {staging_[k].data(), static_cast<size_t>(staging_[k].size())};
}

std::vector<uint32_t> VideoTexture::find_changes(const HostBuffer& frame) {
    const ComputePipeline& pipeline = context_.pipeline(
        "frame_changes", {.spirv = shaders::frame_changes(),
                          .bindings = {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                       VK_DESCRIPTOR_TYPE_STORAGE_BUFFER},
                          .push_constant_bytes = sizeof(gpu::FrameChangeParams)});
    const gpu::FrameChangeParams params{
        grid_.width, grid_.height, grid_.tiles_x(), grid_.tiles_y(), detection_.threshold, 0, 0, 0};
    const VkImageView level0 = texture_.level_view(0, LevelAccess::read);
    const uint64_t done = context_.queue().submit([&](VkCommandBuffer cmd) {
        record_barrier(cmd, {.image = texture_.image(),
                             .old_layout = texture_.layout(),
                             .new_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                             .dst_stages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                             .dst_access = VK_ACCESS_2_SHADER_SAMPLED_READ_BIT});
        texture_.set_layout(VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
        const VkDescriptorImageInfo previous{context_.point_sampler(), level0,
                                             VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
        const VkDescriptorBufferInfo texels{frame.handle(), 0, VK_WHOLE_SIZE};
        const VkDescriptorBufferInfo tiles{changed_tiles_.handle(), 0, VK_WHOLE_SIZE};
        const std::array<VkWriteDescriptorSet, 3> writes{
            sampled_image_write(0, &previous), storage_buffer_write(1, &texels), storage_buffer_write(2, &tiles)};
        record_compute_output_before(cmd);
        pipeline.bind(cmd, writes, &params);
        vkCmdDispatch(cmd, grid_.tiles_x(), grid_.tiles_y(), grid_.layers);
        record_compute_output_after(cmd);  // the flags, to the host
    });
    texture_.mark_used(done);
    context_.queue().wait(done);
    std::vector<uint32_t> changed(grid_.tile_count());
    std::memcpy(changed.data(), changed_tiles_.data(), changed.size() * sizeof(uint32_t));
    return changed;
}

uint64_t VideoTexture::copy(const HostBuffer& frame, const std::vector<DirtyRegion>& regions, bool whole_frame) {
    std::vector<VkBufferImageCopy> copies;
    for (const DirtyRegion& r : regions)
        copies.push_back({.bufferOffset = ((VkDeviceSize{r.first_layer} * grid_.height + r.y) * grid_.width + r.x) * 4,
                          .bufferRowLength = grid_.width,
                          .bufferImageHeight = grid_.height,
                          .imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, r.first_layer, r.layers},
                          .imageOffset = {int32_t(r.x), int32_t(r.y), 0},
                          .imageExtent = {r.width, r.height, 1}});
    const uint64_t done = context_.queue().submit([&](VkCommandBuffer cmd) {
        // The whole image moves (its layout is tracked as one); the old layout keeps the content.
        record_barrier(cmd, {.image = texture_.image(),
                             .old_layout = texture_.layout(),
                             .new_layout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                             .dst_stages = VK_PIPELINE_STAGE_2_COPY_BIT,
                             .dst_access = VK_ACCESS_2_TRANSFER_WRITE_BIT});
        vkCmdCopyBufferToImage(cmd, frame.handle(), texture_.image(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                               uint32_t(copies.size()), copies.data());
        record_barrier(cmd, {.image = texture_.image(),
                             .old_layout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                             .new_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                             .src_stages = VK_PIPELINE_STAGE_2_COPY_BIT,
                             .src_access = VK_ACCESS_2_TRANSFER_WRITE_BIT});
        texture_.set_layout(VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
        if (whole_frame) {
            record_mips(context_, cmd, texture_, MipFilter::box);
        } else {
            for (const DirtyRegion& r : regions) record_mips_update(context_, cmd, texture_, r);
        }
    });
    texture_.mark_used(done);
    return done;
}

FrameUpdate VideoTexture::update() {
    if (!staged_) throw Error("no new frame: write one into next_frame() before update()");
    const size_t k = frames_ % 2;
    FrameUpdate result;
    static_cast<FrameChanges&>(result) = plan_frame_changes(
        frames_ == 0 ? std::vector<uint32_t>{} : find_changes(staging_[k]), grid_, detection_);
    result.done = result.regions.empty() ? context_.queue().last_submitted()
                                         : copy(staging_[k], result.regions, result.whole_frame);
    staging_done_[k] = std::max(result.done, context_.queue().last_submitted());
    staged_ = false;
    ++frames_;
    return result;
}

}  // namespace tvlm
