#pragma once
// The overlay renderer for frames in CUDA memory (cuda/overlay.h's kernels), owning the
// binning buffers and the label font's atlas between draws: the CUDA twin of OverlayRenderer.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "cuda_handle.h"
#include "device_buffer.h"
#include "format.h"
#include "overlay_shapes.h"

namespace tvlm {

class CudaOverlay {
public:
    // Composites `shapes` (overlay_shapes() for this frame) over a frame in CUDA memory, rows
    // `pitch` bytes apart, on `stream`: Format::rgba8_unorm, rgba8_srgb (blended in linear
    // light) or rgba16f (blended as stored). The shapes go through this object's pinned
    // buffer: the host waits only for the previous draw's copy of them (long done when
    // frames come one by one). Labels' glyphs sample the font's atlas, copied to the device
    // at the first draw that has any.
    // Throws Error, launching nothing, for a null frame, another format, a pitch shorter than
    // a row or not a multiple of the texel size, or shapes whose bounds leave the frame.
    // Buffers grow as scenes need them; a draw waits for this object's previous draw
    // (stream-ordered) only where they must grow.
    void draw(std::span<const gpu::OverlayShape> shapes, void* frame, size_t pitch, uint32_t width, uint32_t height,
              Format format, cudaStream_t stream);

private:
    PinnedMemory staging_;
    size_t staging_count_ = 0;
    CudaEvent copied_ = make_event();  // the last copy out of staging_
    DeviceBuffer<gpu::OverlayShape> shapes_;
    DeviceBuffer<uint32_t> counts_, offsets_, busy_, lists_;
    DeviceBuffer<uint8_t> scan_scratch_, atlas_;
};

}  // namespace tvlm
