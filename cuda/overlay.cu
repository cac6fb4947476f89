#include "overlay.h"

#include "cuda_check.h"

namespace tvlm {

namespace {

using gpu::OverlayShape;

__global__ void bin_kernel(OverlayLaunch l, uint32_t tiles_x, bool fill) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= l.shape_count) return;
    const OverlayShape s = l.shapes[i];
    const int tx0 = gpu::overlay_tile_of(s.min_x), ty0 = gpu::overlay_tile_of(s.min_y);
    const int tx1 = gpu::overlay_tile_of(s.max_x), ty1 = gpu::overlay_tile_of(s.max_y);
    for (int ty = ty0; ty <= ty1; ++ty)
        for (int tx = tx0; tx <= tx1; ++tx) {
            const uint32_t tile = uint32_t(ty) * tiles_x + uint32_t(tx);
            if (!fill) atomicAdd(&l.counts[tile], 1u);
            else l.lists[l.offsets[tile] + atomicAdd(&l.cursors[tile], 1u)] = i;
        }
}

// Exclusive prefix sum of the counts, one block (as overlay_scan.comp).
__global__ void scan_kernel(OverlayLaunch l, uint32_t tiles) {
    __shared__ uint32_t run_sums[TVLM_OVERLAY_THREADS];
    const uint32_t t = threadIdx.x, per = (tiles + TVLM_OVERLAY_THREADS - 1) / TVLM_OVERLAY_THREADS;
    const uint32_t first = min(t * per, tiles), end = min(first + per, tiles);
    uint32_t sum = 0;
    for (uint32_t i = first; i < end; ++i) sum += l.counts[i];
    run_sums[t] = sum;
    __syncthreads();
    for (uint32_t stride = 1; stride < TVLM_OVERLAY_THREADS; stride <<= 1) {
        const uint32_t add = t >= stride ? run_sums[t - stride] : 0u;
        __syncthreads();
        run_sums[t] += add;
        __syncthreads();
    }
    uint32_t offset = run_sums[t] - sum;
    for (uint32_t i = first; i < end; ++i) {
        l.offsets[i] = offset;
        offset += l.counts[i];
    }
    if (t == TVLM_OVERLAY_THREADS - 1) l.offsets[tiles] = run_sums[t];
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
        const float x0 = float(blockIdx.x * TVLM_OVERLAY_TILE), y0 = float(blockIdx.y * TVLM_OVERLAY_TILE);
        for (uint32_t i = 0; i < l.shape_count; ++i) {
            const OverlayShape s = l.shapes[i];
            if (gpu::overlay_touches(s, x0, y0, x0 + TVLM_OVERLAY_TILE, y0 + TVLM_OVERLAY_TILE)) composite(s);
        }
    }
    if (touched) *word = gpu::overlay_store(dst, srgb);
}

}  // namespace

void launch_overlay(const OverlayLaunch& l, cudaStream_t stream) {
    const uint32_t tiles_x = (l.width + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE;
    const uint32_t tiles_y = (l.height + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE;
    const size_t tile_bytes = size_t(tiles_x) * tiles_y * sizeof(uint32_t);
    TVLM_CUDA_CHECK(cudaMemsetAsync(l.counts, 0, tile_bytes, stream));
    TVLM_CUDA_CHECK(cudaMemsetAsync(l.cursors, 0, tile_bytes, stream));
    if (l.shape_count) {
        const unsigned blocks = (l.shape_count + TVLM_OVERLAY_THREADS - 1) / TVLM_OVERLAY_THREADS;
        bin_kernel<<<blocks, TVLM_OVERLAY_THREADS, 0, stream>>>(l, tiles_x, false);
        scan_kernel<<<1, TVLM_OVERLAY_THREADS, 0, stream>>>(l, tiles_x * tiles_y);
        bin_kernel<<<blocks, TVLM_OVERLAY_THREADS, 0, stream>>>(l, tiles_x, true);
        shade_kernel<<<dim3(tiles_x, tiles_y), dim3(TVLM_OVERLAY_TILE, TVLM_OVERLAY_TILE), 0, stream>>>(l, tiles_x);
    }
    TVLM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tvlm
