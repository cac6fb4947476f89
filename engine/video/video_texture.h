#pragma once
// A texture that follows a video. Each new frame is compared on the GPU with the frame the
// texture holds, tile by tile (shaders/frame_changes.comp); only the changed rectangles
// are copied into level 0 and only the mip texels that depend on them recomputed
// (update_mips). With a threshold of 0 the texture then equals a full upload and
// regeneration of every frame. With a threshold t > 0 level 0 differs from the frame by
// at most t in any channel: tiles are compared with what the texture holds, not with the
// previous frame, so slow drift is caught once it exceeds t.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/mips/box_filter.h"
#include "engine/video/changed_tiles.h"
#include "engine/textures/format.h"
#include "engine/core/host_buffer.h"
#include "engine/textures/texture.h"

namespace tvlm {

class Context;

// What was copied, and when the texture holds the frame and its mips.
struct FrameUpdate : FrameChanges {
    uint64_t done = 0;  // timeline value
};

class VideoTexture {
public:
    // An RGBA8 (UNORM or sRGB) texture of `layers` frames (a batch of streams) with its full
    // box mip chain. Throws Error for other formats, zero or oversize extents, a threshold
    // above 255 or a scene-cut fraction outside [0, 1].
    VideoTexture(Context& context, uint32_t width, uint32_t height, Format format = Format::rgba8_unorm,
                 ChangeDetection detection = {}, uint32_t layers = 1);
    VideoTexture(const VideoTexture&) = delete;
    VideoTexture& operator=(const VideoTexture&) = delete;
    ~VideoTexture();  // waits until the GPU no longer reads its buffers

    // Where the next frame goes: frame_bytes() bytes, RGBA8 tight rows, layer after layer
    // (a decoder writes here directly). The host waits, if needed, until the GPU finished
    // with the frame that used this buffer two frames ago.
    std::span<std::byte> next_frame();
    // Finds what changed (one GPU pass; the host waits for its tile flags), copies it and
    // updates the mips; returns without waiting for those. Throws Error, changing nothing,
    // when no frame was written since the last update.
    FrameUpdate update();

    Texture& texture() { return texture_; }
    const TileGrid& grid() const { return grid_; }
    size_t frame_bytes() const { return staging_[0].size(); }

private:
    std::vector<uint32_t> find_changes(const HostBuffer& frame);
    uint64_t copy(const HostBuffer& frame, const std::vector<DirtyRegion>& regions, bool whole_frame);

    Context& context_;
    ChangeDetection detection_;
    Texture texture_;
    TileGrid grid_;
    HostBuffer staging_[2];
    uint64_t staging_done_[2] = {0, 0};
    HostBuffer changed_tiles_;
    uint64_t frames_ = 0;
    bool staged_ = false;
};

}  // namespace tvlm
