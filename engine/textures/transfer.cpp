#include "engine/textures/transfer.h"

#include <cstring>
#include <string>

#include "engine/core/barriers.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/textures/texture.h"

namespace tvlm {

namespace {

void check_subresource(const Texture& t, uint32_t level, uint32_t layer) {
    if (level >= t.levels())
        throw Error("mip level " + std::to_string(level) + " does not exist: the texture has " +
                    std::to_string(t.levels()) + " levels (0.." + std::to_string(t.levels() - 1) + ")");
    if (layer >= t.desc().layers)
        throw Error("layer " + std::to_string(layer) + " does not exist: the texture has " +
                    std::to_string(t.desc().layers) + " layers");
}

// Moves the whole image from its tracked layout to `layout`, after all earlier work.
void transition(VkCommandBuffer cmd, Texture& t, VkImageLayout layout) {
    record_barrier(cmd, {.image = t.image(), .old_layout = t.layout(), .new_layout = layout});
    t.set_layout(layout);
}

// Copies `buffer` (tight rows, layers one after another) into a rectangle of one level of
// `layers` layers, moving the whole image to TRANSFER_DST and back to SHADER_READ_ONLY.
void record_copy_to_level(VkCommandBuffer cmd, Texture& t, VkBuffer buffer, TexelRegion r, uint32_t width,
                          uint32_t height, uint32_t layers) {
    transition(cmd, t, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
    VkBufferImageCopy copy{};
    copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, r.level, r.layer, layers};
    copy.imageOffset = {static_cast<int32_t>(r.x), static_cast<int32_t>(r.y), 0};
    copy.imageExtent = {width, height, 1};
    vkCmdCopyBufferToImage(cmd, buffer, t.image(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &copy);
    transition(cmd, t, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
}

}  // namespace

uint64_t upload(Context& context, Texture& texture, const HostPixels& pixels, TexelRegion r) {
    check_subresource(texture, r.level, r.layer);
    texture.require_usage(VK_IMAGE_USAGE_TRANSFER_DST_BIT, "an upload");
    const Extent2D e = texture.extent(r.level);
    if (!pixels.data || pixels.width == 0 || pixels.height == 0)
        throw Error("upload of an empty image: pixels must have data and a non-zero size");
    if (pixels.channels != 1 && pixels.channels != 3 && pixels.channels != 4)
        throw Error("upload of " + std::to_string(pixels.channels) + "-channel pixels: expected 1, 3 or 4");
    if (uint64_t{r.x} + pixels.width > e.width || uint64_t{r.y} + pixels.height > e.height)
        throw Error("upload rectangle " + std::to_string(pixels.width) + "x" + std::to_string(pixels.height) + " at (" +
                    std::to_string(r.x) + "," + std::to_string(r.y) + ") does not fit level " +
                    std::to_string(r.level) + " of " + std::to_string(e.width) + "x" + std::to_string(e.height));
    if (pixels.row_bytes && pixels.row_bytes < pixels.packed_row_bytes())
        throw Error("upload row_bytes " + std::to_string(pixels.row_bytes) + " is less than a row of " +
                    std::to_string(pixels.packed_row_bytes()) + " bytes");

    const size_t size = size_t{pixels.width} * pixels.height * format_info(texture.desc().format).texel_bytes();
    HostBuffer staging(context.physical_device(), context.device(), size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
    convert_host_pixels(pixels, texture.desc().format, {reinterpret_cast<uint8_t*>(staging.data()), size});
    const VkBuffer buffer = staging.handle();
    std::vector<HostBuffer> keep;
    keep.push_back(std::move(staging));
    const uint64_t done = context.queue().submit(
        [&](VkCommandBuffer cmd) { record_copy_to_level(cmd, texture, buffer, r, pixels.width, pixels.height, 1); },
        std::move(keep));
    texture.mark_used(done);
    return done;
}

void record_upload(VkCommandBuffer cmd, Texture& texture, const HostBuffer& staging, TexelRegion r, uint32_t width,
                   uint32_t height) {
    check_subresource(texture, r.level, r.layer);
    texture.require_usage(VK_IMAGE_USAGE_TRANSFER_DST_BIT, "an upload");
    const Extent2D e = texture.extent(r.level);
    if (width == 0 || height == 0 || uint64_t{r.x} + width > e.width || uint64_t{r.y} + height > e.height)
        throw Error("upload rectangle " + std::to_string(width) + "x" + std::to_string(height) + " at (" +
                    std::to_string(r.x) + "," + std::to_string(r.y) + ") is empty or does not fit level " +
                    std::to_string(r.level) + " of " + std::to_string(e.width) + "x" + std::to_string(e.height));
    const size_t size = size_t{width} * height * format_info(texture.desc().format).texel_bytes();
    if (!staging.handle() || staging.size() < size)
        throw Error("the staging buffer holds " + std::to_string(staging.size()) + " bytes; the rectangle needs " +
                    std::to_string(size) + " (tight rows in the texture's format)");
    record_copy_to_level(cmd, texture, staging.handle(), r, width, height, 1);
}

void record_copy(VkCommandBuffer cmd, Texture& from, Texture& to) {
    const TextureDesc &a = from.desc(), &b = to.desc();
    if (a.width != b.width || a.height != b.height || a.layers != b.layers || a.format != b.format)
        throw Error("cannot copy a " + std::to_string(a.width) + "x" + std::to_string(a.height) + "x" +
                    std::to_string(a.layers) + " " + std::string(format_info(a.format).name) + " image into a " +
                    std::to_string(b.width) + "x" + std::to_string(b.height) + "x" + std::to_string(b.layers) + " " +
                    std::string(format_info(b.format).name) +
                    " texture: make the texture with the image's extent, layers and "
                    "format");
    from.require_usage(VK_IMAGE_USAGE_TRANSFER_SRC_BIT, "copying from the image");
    to.require_usage(VK_IMAGE_USAGE_TRANSFER_DST_BIT, "copying into the texture");
    transition(cmd, from, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    transition(cmd, to, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
    VkImageCopy copy{};
    copy.srcSubresource = copy.dstSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, a.layers};
    copy.extent = {a.width, a.height, 1};
    vkCmdCopyImage(cmd, from.image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, to.image(),
                   VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &copy);
    transition(cmd, from, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
    transition(cmd, to, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
}

FrameUploader::FrameUploader(Context& context, const TextureDesc& desc, uint32_t buffers)
    : context_(context), desc_(desc), done_(buffers, 0) {
    if (buffers == 0) throw Error("a FrameUploader needs at least one staging buffer");
    frame_bytes_ = size_t{desc.width} * desc.height * desc.layers * format_info(desc.format).texel_bytes();
    for (uint32_t i = 0; i < buffers; ++i)
        staging_.emplace_back(context.physical_device(), context.device(), frame_bytes_,
                              VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
}

uint64_t FrameUploader::upload(Texture& texture, const void* texels) {
    if (!texels) throw Error("frame upload from a null pointer: pass the frame's texels");
    check(texture);
    std::memcpy(next_staging().data(), texels, frame_bytes_);
    return upload_staged(texture);
}

std::span<std::byte> FrameUploader::next_staging() {
    const size_t slot = frame_ % staging_.size();
    context_.queue().wait(done_[slot]);  // the GPU has copied the frame this buffer held
    staged_ = true;
    return {staging_[slot].data(), frame_bytes_};
}

void FrameUploader::check(const Texture& texture) const {
    texture.require_usage(VK_IMAGE_USAGE_TRANSFER_DST_BIT, "a frame upload");
    const TextureDesc& d = texture.desc();
    if (d.width != desc_.width || d.height != desc_.height || d.layers != desc_.layers || d.format != desc_.format)
        throw Error("frame upload into a texture of another size, layer count or format than the FrameUploader's");
}

uint64_t FrameUploader::upload_staged(Texture& texture) {
    if (!staged_) throw Error("upload_staged() without next_staging(): write the frame into next_staging() first");
    check(texture);
    const TextureDesc& d = texture.desc();
    const size_t slot = frame_ % staging_.size();
    const VkBuffer buffer = staging_[slot].handle();
    done_[slot] = context_.queue().submit(
        [&](VkCommandBuffer cmd) { record_copy_to_level(cmd, texture, buffer, {}, d.width, d.height, d.layers); });
    texture.mark_used(done_[slot]);
    staged_ = false;
    ++frame_;
    return done_[slot];
}

std::vector<uint8_t> readback(Context& context, Texture& texture, uint32_t level, uint32_t layer) {
    check_subresource(texture, level, layer);
    texture.require_usage(VK_IMAGE_USAGE_TRANSFER_SRC_BIT, "a readback");
    const Extent2D e = texture.extent(level);
    const size_t size = size_t{e.width} * e.height * format_info(texture.desc().format).texel_bytes();
    HostBuffer staging(context.physical_device(), context.device(), size, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
    const uint64_t done = context.queue().submit([&](VkCommandBuffer cmd) {
        transition(cmd, texture, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
        VkBufferImageCopy copy{};
        copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, level, layer, 1};
        copy.imageExtent = {e.width, e.height, 1};
        vkCmdCopyImageToBuffer(cmd, texture.image(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, staging.handle(), 1, &copy);
        record_barrier(cmd, {.image = texture.image(),
                             .old_layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                             .new_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL});
        texture.set_layout(VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
        // Make the copy's writes visible to the host read below.
        record_memory_barrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                              VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    });
    context.queue().wait(done);
    std::vector<uint8_t> bytes(size);
    std::memcpy(bytes.data(), staging.data(), size);
    return bytes;
}

ImageF readback_image(Context& context, Texture& texture, uint32_t level, uint32_t layer) {
    const std::vector<uint8_t> bytes = readback(context, texture, level, layer);
    const Extent2D e = texture.extent(level);
    return decode_texels(bytes, e.width, e.height, texture.desc().format);
}

}  // namespace tvlm
