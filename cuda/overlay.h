#pragma once
// The overlay renderer's CUDA kernels, for frames already in CUDA memory: the same four
// passes as the Vulkan renderer (shaders/overlay_*.comp) on the same shape records
// (shaders/overlay_shapes.h): count each tile's shapes, prefix-sum the counts, fill the
// tiles' lists, then shade each tile's pixels with its list sorted into scene order. The
// prefix sum is CUB's; the binning runs a block per shape.
// Stream-ordered, no host sync. interop/cuda_overlay.h owns the buffers.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "overlay_shapes.h"

namespace tvlm {

struct OverlayLaunch {
    const gpu::OverlayShape* shapes = nullptr;  // device memory, bounds on the frame
    uint32_t shape_count = 0;
    uint32_t* counts = nullptr;   // tiles_x * tiles_y + 1, zeroed by the launch
    uint32_t* offsets = nullptr;  // tiles + 1
    uint32_t* cursors = nullptr;  // tiles, zeroed by the launch
    uint32_t* lists = nullptr;    // one entry per (shape, tile) pair
    uint8_t* frame = nullptr;     // RGBA8, rows `pitch` bytes apart (a multiple of 4)
    size_t pitch = 0;
    uint32_t width = 0, height = 0;
    bool srgb = false;            // the bytes are sRGB: blend in linear light
    void* scan_scratch = nullptr;  // overlay_scan_scratch_bytes(tiles) bytes
    size_t scan_scratch_bytes = 0;
};

// The scratch CUB's prefix sum of `tiles` counts needs.
size_t overlay_scan_scratch_bytes(uint32_t tiles);

void launch_overlay(const OverlayLaunch& launch, cudaStream_t stream);

}  // namespace tvlm
