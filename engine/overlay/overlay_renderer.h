#pragma once
// The overlay renderer on Vulkan compute (any Vulkan 1.3 device): shapes binned into screen
// tiles by GPU passes (counts, prefix sums, lists; shaders/overlay_bin.comp and
// overlay_scan.comp), then each tile composites only its own shapes, in scene order, over
// its pixels (overlay_shade.comp), so the cost follows coverage. The frame is level 0,
// layer 0 of an RGBA8 texture (UNORM, or sRGB blended in linear light) or an RGBA16F one
// (blended as stored), changed in place.
#include <cstdint>
#include <optional>
#include <span>

#include "engine/core/gpu_buffer.h"
#include "engine/core/host_buffer.h"
#include "shaders/overlay_shapes.h"
#include "engine/textures/texture.h"

namespace tvlm {

class Context;

class OverlayRenderer {
public:
    explicit OverlayRenderer(Context& context);
    OverlayRenderer(const OverlayRenderer&) = delete;
    OverlayRenderer& operator=(const OverlayRenderer&) = delete;
    ~OverlayRenderer();  // waits until the GPU no longer reads its buffers

    // Submits the draw of `shapes` (overlay_shapes(): bounds clipped to this frame) over
    // `frame`; returns the timeline value it completes at, without waiting. Waits for this
    // renderer's previous draw before reusing its buffers. Throws Error, recording nothing,
    // for a frame that is not RGBA8 or RGBA16F or cannot be written as words, or shapes
    // whose bounds leave the frame.
    uint64_t draw(Texture& frame, std::span<const gpu::OverlayShape> shapes);

private:
    Context& context_;
    HostBuffer shapes_;  // this draw's shapes, read by the GPU
    HostBuffer atlas_;   // the label font's SDF atlas (a placeholder without a font)
    std::optional<GpuBuffer> counts_, offsets_, cursors_, lists_;  // grown as scenes need
    uint64_t last_draw_ = 0;
};

// `shapes` over a frame in host memory (tight rows; rgba8_unorm, rgba8_srgb blended in
// linear light, or rgba16f as halves), in place, by Vulkan compute on `context`: a texture
// uploaded, drawn and read back; waits. What `tvlm overlay` and texturevlm.overlay do for
// host frames.
void draw_overlay_on_host(Context& context, std::span<const gpu::OverlayShape> shapes, std::span<uint8_t> texels,
                          uint32_t width, uint32_t height, Format format);

}  // namespace tvlm
