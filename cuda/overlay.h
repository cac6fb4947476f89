#pragma once
// The overlay renderer's CUDA kernels, for frames already in CUDA memory: the same passes as
// the Vulkan renderer (shaders/overlay_*.comp) on the same shape records
// (shaders/overlay_shapes.h): count each tile's shapes (noting the tiles that have any),
// prefix-sum the counts, fill the tiles' lists, then shade the busy tiles' pixels with each
// list sorted into scene order. The prefix sum is CUB's; the binning runs a block per shape;
// the shading a fixed grid of blocks walking the busy tiles, so the 32,400 tiles of a 4K
// frame cost nothing where no shape lies.
// Stream-ordered, no host sync. interop/cuda_overlay.h owns the buffers.
#include <cuda_runtime_api.h>
#include <vector_types.h>

#include <cstddef>
#include <cstdint>

#include "overlay_shapes.h"

namespace tvlm {

struct OverlayLaunch {
    const gpu::OverlayShape* shapes = nullptr;  // device memory, bounds on the frame
    uint32_t shape_count = 0;
    uint32_t* counts = nullptr;   // tiles + 2, zeroed by the launch: the counts, the scan's extra
                                  // entry, the number of busy tiles
    uint32_t* offsets = nullptr;  // tiles + 1
    uint32_t* busy = nullptr;     // tiles: the tiles some shape touches, in any order
    uint32_t* lists = nullptr;    // one entry per (shape, tile) pair
    uint32_t busy_bound = 0;      // at most this many tiles are busy (the host's count of pairs, or tiles)
    void* frame = nullptr;        // RGBA8 words or RGBA16F texels, rows `pitch` bytes apart
    size_t pitch = 0;
    uint32_t width = 0, height = 0;
    bool half = false;             // RGBA16F, blended as stored; else RGBA8
    bool srgb = false;             // RGBA8 whose bytes are sRGB: blend in linear light
    const uint8_t* atlas = nullptr;  // the label font's SDF atlas (device memory), for glyphs
    uint32_t atlas_width = 0;
    void* scan_scratch = nullptr;  // overlay_scan_scratch_bytes(tiles) bytes
    size_t scan_scratch_bytes = 0;
};

// Links computed on the device (the KNN graph's) as curve shapes: slot i < max_edges of
// `shapes` gets link i's curve, or a shape that covers nothing past *edge_count.
struct OverlayLinkLaunch {
    const float* xy = nullptr;        // device: x, y per point
    const uint2* edges = nullptr;     // device: the links' ends
    const uint32_t* edge_count = nullptr;  // device
    uint32_t max_edges = 0;
    float width = 0;
    uint32_t color = 0;               // RGBA8 word
    gpu::OverlayShape* shapes = nullptr;
    uint32_t width_px = 0, height_px = 0;  // the frame
};
void launch_overlay_links(const OverlayLinkLaunch& launch, cudaStream_t stream);

// The scratch CUB's prefix sum of `tiles` counts needs.
size_t overlay_scan_scratch_bytes(uint32_t tiles);

void launch_overlay(const OverlayLaunch& launch, cudaStream_t stream);

}  // namespace tvlm
