#pragma once
// The overlay renderer's CUDA kernels, for frames already in CUDA memory: the same passes as
// the Vulkan renderer (shaders/overlay_*.comp) on the same shape records
// (shaders/overlay_shapes.h), binned in one pass instead of the Vulkan renderer's three
// (count, prefix sum, fill): each tile's count, the tiles that have any, and a fixed list
// of up to kOverlayTileList shapes per tile, each entry with the pixel warps of the shading
// it concerns; the pass also decodes every shape once (colours premultiplied, a box's
// constants). Then the busy tiles are shaded: per block, one warp prepares tiles into a
// ring of slots (each list in scene order, the decoded records copied in asynchronously)
// while eight warps composite them, or, in a tile of more shapes, walk every shape in
// order. The binning runs a block per shape; the shading a fixed grid of blocks walking the
// busy tiles, so the 32,400 tiles of a 4K frame cost nothing where no shape lies.
// Stream-ordered, no host sync. cuda_pipelines/cuda_overlay.h owns the buffers.
#include <cuda_runtime_api.h>
#include <vector_types.h>

#include <cstddef>
#include <cstdint>

#include "shaders/overlay_shapes.h"

namespace tvlm {

inline constexpr uint32_t kOverlayTileList = 32;  // shapes a tile lists; a tile of more walks them all
inline constexpr uint32_t kOverlayMaxSide =
    1u << 20;  // frame pixels a side: a busy tile keeps its column and row in 16 bits each

// A shape as the shading reads it, decoded once per draw by the binning pass: the record,
// its colours premultiplied in the blending space, and a box's per-pixel constants.
struct alignas(16) OverlayDecodedShape {
    gpu::OverlayShape s;
    float4 box;  // half size less the corner radius (x, y); 0.5 + radius (z), less the stroke (w)
    gpu::OverlayPixel fill, stroke;
};

// A tile's list entry: the shape, and which pixel warps of the shading draw it (bits 0-7,
// warp w's 8x4 block of the tile's pixels) and from their fill alone (bits 8-15).
struct alignas(8) OverlayListEntry {
    uint32_t shape;
    uint32_t warps;
};

// Links computed on the device (the KNN graph's), drawn as curve shapes: the counting pass
// makes slot i < max_edges (shape first + i) link i's curve, or a shape that covers nothing
// past *edge_count.
struct OverlayLinks {
    const float* xy = nullptr;             // device: x, y per point
    const uint2* edges = nullptr;          // device: the links' ends
    const uint32_t* edge_count = nullptr;  // device
    uint32_t max_edges = 0;                // 0: no device links
    float width = 0;
    uint32_t color = 0;  // RGBA8 word
    uint32_t first = 0;  // the shape index of slot 0
};

struct OverlayLaunch {
    const gpu::OverlayShape* staged = nullptr;  // pinned host memory: the shapes (bounds on the frame)
    OverlayDecodedShape* shapes = nullptr;      // device memory: the binning writes the shapes and the links' here
    uint32_t shape_count = 0;                   // the links' slots included
    OverlayLinks links;
    // Three counts of busy tiles in turn, this draw's at [turn]; the shading zeroes the last
    // draw's.
    uint32_t* busy_counts = nullptr;
    uint32_t turn = 0;
    // The per-draw buffers here are the draw's half of two (CudaOverlay alternates them), so
    // that a draw's binning runs while the shading of the draw before finishes.
    uint32_t* counts = nullptr;         // tiles: each tile's count of shapes, zero before and after the draw
    uint32_t* busy = nullptr;           // tiles: the tiles some shape touches (row << 16 | column), in any order
    OverlayListEntry* lists = nullptr;  // tiles * kOverlayTileList: each tile's shapes, the first that came
    uint32_t busy_bound = 0;            // at most this many tiles are busy (the host's count of pairs, or tiles)
    void* frame = nullptr;              // RGBA8 words or RGBA16F texels, rows `pitch` bytes apart
    size_t pitch = 0;
    uint32_t width = 0, height = 0;
    bool half = false;               // RGBA16F, blended as stored; else RGBA8
    bool srgb = false;               // RGBA8 whose bytes are sRGB: blend in linear light
    const uint8_t* atlas = nullptr;  // the label font's SDF atlas (device memory), for glyphs
    uint32_t atlas_width = 0;
};

void launch_overlay(const OverlayLaunch& launch, cudaStream_t stream);

}  // namespace tvlm
