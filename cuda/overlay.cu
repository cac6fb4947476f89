#include "overlay.h"

#include <cub/device/device_scan.cuh>

#include "cuda_check.h"

namespace tvlm {

namespace {

using gpu::OverlayShape;

// A block per shape, its threads over the tiles its bounds touch: a large shape's hundreds
// of tiles are counted (or filled) in parallel, not by one thread in turn.
__global__ void bin_kernel(OverlayLaunch l, uint32_t tiles_x, bool fill) {
    const uint32_t i = blockIdx.x;
    const OverlayShape s = l.shapes[i];
    const int tx0 = gpu::overlay_tile_of(s.min_x), ty0 = gpu::overlay_tile_of(s.min_y);
    const uint32_t across = uint32_t(gpu::overlay_tile_of(s.max_x) - tx0 + 1);
    const uint32_t count = across * uint32_t(gpu::overlay_tile_of(s.max_y) - ty0 + 1);
    for (uint32_t k = threadIdx.x; k < count; k += blockDim.x) {
        const uint32_t tile = (uint32_t(ty0) + k / across) * tiles_x + uint32_t(tx0) + k % across;
        if (!fill) atomicAdd(&l.counts[tile], 1u);
        else l.lists[l.offsets[tile] + atomicAdd(&l.cursors[tile], 1u)] = i;
    }
}

// A block per tile, a thread per pixel (as overlay_shade.comp).
__global__ void shade_kernel(OverlayLaunch l, uint32_t tiles_x) {
    __shared__ uint32_t sorted[TVLM_OVERLAY_SORTED];
    const uint32_t tile = blockIdx.y * tiles_x + blockIdx.x, t = threadIdx.y * TVLM_OVERLAY_TILE + threadIdx.x;
    const uint32_t n = l.counts[tile];
    if (n == 0) return;
    const uint32_t x = blockIdx.x * TVLM_OVERLAY_TILE + threadIdx.x, y = blockIdx.y * TVLM_OVERLAY_TILE + threadIdx.y;
    const bool inside = x < l.width && y < l.height;
    const float px = float(x) + 0.5f, py = float(y) + 0.5f;
    const uint32_t srgb = l.srgb ? 1u : 0u;
    uint32_t* word = inside ? reinterpret_cast<uint32_t*>(l.frame + size_t(y) * l.pitch) + x : nullptr;
    gpu::OverlayPixel dst{};
    if (inside) dst = gpu::overlay_load(*word, srgb);
    bool touched = false;
    const auto composite = [&](const OverlayShape& s) {
        if (!gpu::overlay_touches(s, float(x), float(y), float(x) + 1.0f, float(y) + 1.0f)) return;
        const gpu::OverlayCoverage c = gpu::overlay_shape_coverage(s, px, py);
        if (c.fill > 0.0f || c.stroke > 0.0f) {
            dst = gpu::overlay_over(dst, s, c, srgb);
            touched = true;
        }
    };
    if (n <= TVLM_OVERLAY_SORTED) {
        uint32_t size = 1;
        while (size < n) size <<= 1;
        for (uint32_t i = t; i < size; i += TVLM_OVERLAY_THREADS) sorted[i] = i < n ? l.lists[l.offsets[tile] + i] : ~0u;
        __syncthreads();
        for (uint32_t k = 2; k <= size; k <<= 1)
            for (uint32_t j = k >> 1; j > 0; j >>= 1) {
                for (uint32_t i = t; i < size; i += TVLM_OVERLAY_THREADS) {
                    const uint32_t partner = i ^ j;
                    if (partner > i) {
                        const bool ascending = (i & k) == 0;
                        const uint32_t a = sorted[i], b = sorted[partner];
                        if ((a > b) == ascending) {
                            sorted[i] = b;
                            sorted[partner] = a;
                        }
                    }
                }
                __syncthreads();
            }
        if (!inside) return;
        for (uint32_t i = 0; i < n; ++i) composite(l.shapes[sorted[i]]);
    } else {
        if (!inside) return;
        for (uint32_t i = 0; i < l.shape_count; ++i) composite(l.shapes[i]);
    }
    if (touched) *word = gpu::overlay_store(dst, srgb);
}

}  // namespace

void launch_overlay(const OverlayLaunch& l, cudaStream_t stream) {
    const uint32_t tiles_x = (l.width + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE;
    const uint32_t tiles_y = (l.height + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE;
    const size_t tile_bytes = size_t(tiles_x) * tiles_y * sizeof(uint32_t);
    TVLM_CUDA_CHECK(cudaMemsetAsync(l.counts, 0, tile_bytes + sizeof(uint32_t), stream));  // + the scan's extra entry
    TVLM_CUDA_CHECK(cudaMemsetAsync(l.cursors, 0, tile_bytes, stream));
    if (l.shape_count) {
        bin_kernel<<<l.shape_count, 128, 0, stream>>>(l, tiles_x, false);
        // The counts' exclusive prefix sum by CUB (tiles + 1 entries: the last is the total;
        // counts[tiles] is the zeroed extra entry).
        size_t scratch_bytes = l.scan_scratch_bytes;
        TVLM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(l.scan_scratch, scratch_bytes, l.counts, l.offsets,
                                                      int(tiles_x * tiles_y + 1), stream));
        bin_kernel<<<l.shape_count, 128, 0, stream>>>(l, tiles_x, true);
        shade_kernel<<<dim3(tiles_x, tiles_y), dim3(TVLM_OVERLAY_TILE, TVLM_OVERLAY_TILE), 0, stream>>>(l, tiles_x);
    }
    TVLM_CUDA_CHECK(cudaGetLastError());
}

size_t overlay_scan_scratch_bytes(uint32_t tiles) {
    size_t bytes = 0;
    TVLM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<uint32_t*>(nullptr),
                                                  static_cast<uint32_t*>(nullptr), int(tiles + 1)));
    return bytes;
}

}  // namespace tvlm
