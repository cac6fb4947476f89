#pragma once
// Host <-> texture copies through staging buffers.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/host_buffer.h"
#include "engine/textures/image.h"
#include "engine/textures/texture.h"

namespace tvlm {

class Context;

struct TexelRegion {
    uint32_t layer = 0, level = 0;
    uint32_t x = 0, y = 0;  // top-left texel of the rectangle written
};

// Copies `pixels` (any component type, 1/3/4 channels; converted to the texture's format)
// into a rectangle of one level of one layer. Texels outside the rectangle keep their
// content; mips are not regenerated. Returns the timeline value after which the copy is
// complete; does not wait. Throws Error, changing nothing, if the rectangle does not fit.
uint64_t upload(Context& context, Texture& texture, const HostPixels& pixels, TexelRegion region = {});

// Uploads whole frames for video: level 0 of every layer from texels already in the
// texture's format (tight rows, layers one after another), through staging buffers made
// once and reused in turn. Before refilling a buffer the host waits until the GPU finished
// copying out of it (`buffers` frames ago): the only wait, flow control of the ring.
class FrameUploader {
public:
    // Throws Error for `buffers` of 0.
    FrameUploader(Context& context, const TextureDesc& desc, uint32_t buffers = 2);
    // Returns the timeline value after which level 0 holds the frame (mips not regenerated).
    // Throws Error, copying nothing, for a null pointer or a texture of another desc.
    uint64_t upload(Texture& texture, const void* texels);
    // Zero-copy for producers that can write the frame where the GPU copies it from (a
    // decoder's output buffer): the next staging buffer (once the GPU is done with it),
    // then upload_staged() to copy it into level 0. Same result as upload().
    std::span<std::byte> next_staging();
    uint64_t upload_staged(Texture& texture);
    size_t frame_bytes() const { return frame_bytes_; }

private:
    void check(const Texture& texture) const;
    Context& context_;
    TextureDesc desc_;
    size_t frame_bytes_ = 0;
    std::vector<HostBuffer> staging_;
    std::vector<uint64_t> done_;  // timeline value of each buffer's last copy
    uint64_t frame_ = 0;
    bool staged_ = false;  // next_staging() handed out the buffer of frame_
};

// Recorded into `cmd` (a renderer's own command buffer: docs/cpp.md): a copy of `staging` into `region` (one level and layer; width x height texels from
// region.x, region.y) of the texture. `staging` holds tight rows in the texture's format
// (convert_host_pixels, image.h), written by the host before the submission (host writes
// to host-coherent memory are visible to a later submission).
// Needs TRANSFER_DST usage. Before: nothing. Layouts: texture.layout() -> TRANSFER_DST_OPTIMAL
// -> SHADER_READ_ONLY_OPTIMAL. After: the copy's writes available to every later command.
// Mips are not rebuilt: record_mips after it. The caller submits and keeps `staging` and the
// texture alive until the work completes.
void record_upload(VkCommandBuffer cmd, Texture& texture, const HostBuffer& staging, TexelRegion region, uint32_t width,
                   uint32_t height);

// Recorded into `cmd`: level 0 of every layer of `from` copied into `to`, texel for texel
// (same extent, layer count and format): an application's image that CUDA cannot import
// copied into an exportable texturevlm texture (docs/cpp.md). Needs TRANSFER_SRC on
// `from` and TRANSFER_DST on `to`. Before: nothing (the barriers wait for all earlier
// commands' writes). Layouts: from.layout() -> TRANSFER_SRC_OPTIMAL and to.layout() ->
// TRANSFER_DST_OPTIMAL, both -> SHADER_READ_ONLY_OPTIMAL after. After: the copy's writes
// available to every later command. Mips of `to` are not rebuilt. Throws Error, recording
// nothing, for textures that differ or lack the usage.
void record_copy(VkCommandBuffer cmd, Texture& from, Texture& to);

// Reads one level of one layer as the format's bytes (waits on the host: for tools and
// tests). Throws Error if the level or layer does not exist.
std::vector<uint8_t> readback(Context& context, Texture& texture, uint32_t level = 0, uint32_t layer = 0);
ImageF readback_image(Context& context, Texture& texture, uint32_t level = 0, uint32_t layer = 0);

}  // namespace tvlm
