#pragma once
// The overlay renderer for frames in CUDA memory (cuda/overlay/overlay.h's kernels), owning the
// binning buffers and the label font's atlas between draws: the CUDA twin of OverlayRenderer.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "cuda/cuda_handle.h"
#include "cuda/device_buffer.h"
#include "engine/textures/format.h"
#include "shaders/overlay_shapes.h"

namespace tvlm {

// Links whose ends the device chose (CudaKnnGraph::links), drawn as curves by the draw
// that takes them, at index `at` of its shapes: after the scene's curves and before its
// points (overlay_shapes' curves_end), as link_points() places them on the host.
struct OverlayDeviceLinks {
    const float* xy = nullptr;             // device: x, y per point
    const uint2* edges = nullptr;          // device: the links' ends
    const uint32_t* edge_count = nullptr;  // device: how many
    uint32_t max_edges = 0;                // at most this many
    float width = 2;
    uint32_t color = 0;  // RGBA8 word
    size_t at = 0;
};

struct OverlayDecodedShape;  // cuda/overlay/overlay.h: what the kernels keep between their passes
struct OverlayListEntry;

class CudaOverlay {
public:
    // Composites `shapes` (overlay_shapes() for this frame) over a frame in CUDA memory, rows
    // `pitch` bytes apart, on `stream`: Format::rgba8_unorm, rgba8_srgb (blended in linear
    // light) or rgba16f (blended as stored). The shapes go through this object's two pinned
    // buffers in turn, read by the binning kernel: the host waits only for the draw before
    // the previous one to have read its buffer. Labels' glyphs sample the font's atlas, copied to the device
    // at the first draw that has any.
    // Throws Error, launching nothing, for a null frame, a frame over kOverlayMaxSide (2^20)
    // pixels a side, another format, a pitch shorter than a row or not a multiple of the
    // texel size, or shapes whose bounds leave the frame.
    // Buffers grow as scenes need them; a draw waits for this object's previous draw
    // (stream-ordered) only where they must grow.
    // `links`: also these device-made links, at links->at (at most shapes.size()).
    void draw(std::span<const gpu::OverlayShape> shapes, void* frame, size_t pitch, uint32_t width, uint32_t height,
              Format format, cudaStream_t stream, const OverlayDeviceLinks* links = nullptr);

private:
    // Everything a draw writes comes in two halves, used in turn by draws: the pinned staging
    // buffers (the host fills one while the GPU reads the other: a draw waits only for the
    // draw before the last, and the host runs a frame ahead) and the kernels' buffers (a
    // draw's binning writes its half while the shading of the draw before may still read
    // the other). The counts of busy tiles come in three, in turn.
    int half_ = 0;
    PinnedMemory staging_[2];
    size_t staging_count_[2] = {};
    CudaEvent copied_[2] = {make_event(), make_event()};  // the last draw that read each
    DeviceBuffer<OverlayDecodedShape> shapes_[2];
    DeviceBuffer<uint32_t> counts_[2], busy_[2];
    DeviceBuffer<OverlayListEntry> lists_[2];
    DeviceBuffer<uint32_t> busy_counts_;
    uint32_t turn_ = 0;
    bool counts_zeroed_ = false;  // the counts are all zero: the draws' passes were all launched
    DeviceBuffer<uint8_t> atlas_;
};

}  // namespace tvlm
