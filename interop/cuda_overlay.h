#pragma once
// The overlay renderer for frames in CUDA memory (cuda/overlay.h's kernels), owning the
// binning buffers between draws: the CUDA twin of OverlayRenderer.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "cuda_handle.h"
#include "device_buffer.h"
#include "overlay_shapes.h"

namespace tvlm {

class CudaOverlay {
public:
    // Composites `shapes` (overlay_shapes() for this frame) over an RGBA8 frame in CUDA
    // memory, rows `pitch` bytes apart, on `stream`; `srgb`: the bytes are sRGB, blended in
    // linear light. The shapes go through this object's pinned buffer: the host waits only
    // for the previous draw's copy of them (long done when frames come one by one).
    // Throws Error, launching nothing, for a null frame, a pitch that is not a multiple of 4
    // or shorter than a row, shapes whose bounds leave the frame, or labels' glyphs (not
    // drawn by CUDA yet). Buffers grow as scenes
    // need them; a draw waits for this object's previous draw (stream-ordered) only where
    // they must grow.
    void draw(std::span<const gpu::OverlayShape> shapes, uint8_t* frame, size_t pitch, uint32_t width, uint32_t height,
              bool srgb, cudaStream_t stream);

private:
    PinnedMemory staging_;
    size_t staging_count_ = 0;
    CudaEvent copied_ = make_event();  // the last copy out of staging_
    DeviceBuffer<gpu::OverlayShape> shapes_;
    DeviceBuffer<uint32_t> counts_, offsets_, cursors_, lists_;
    DeviceBuffer<uint8_t> scan_scratch_;
};

}  // namespace tvlm
