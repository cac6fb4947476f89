#include "overlay.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <cub/device/device_scan.cuh>

#include "cuda_check.h"
#include "cuda_devices.h"

namespace tvlm {

namespace {

using gpu::OverlayShape;

// A block per shape, its threads over the tiles its bounds touch: a large shape's hundreds
// of tiles are counted (or filled) in parallel, not by one thread in turn. Counting notes
// each tile whose count leaves zero in the busy list; filling takes its slots by counting
// back down, so the counts end at zero and the shading reads each list's length from the
// offsets.
__global__ void bin_kernel(OverlayLaunch l, uint32_t tiles_x, uint32_t tiles, bool fill) {
    const uint32_t i = blockIdx.x;
    const OverlayShape s = l.shapes[i];
    if (!(s.min_x <= s.max_x && s.min_y <= s.max_y)) return;  // an unused link slot: nothing to draw
    const int tx0 = gpu::overlay_tile_of(s.min_x), ty0 = gpu::overlay_tile_of(s.min_y);
    const uint32_t across = uint32_t(gpu::overlay_tile_of(s.max_x) - tx0 + 1);
    const uint32_t count = across * uint32_t(gpu::overlay_tile_of(s.max_y) - ty0 + 1);
    for (uint32_t k = threadIdx.x; k < count; k += blockDim.x) {
        const uint32_t tx = uint32_t(tx0) + k % across, ty = uint32_t(ty0) + k / across;
        if (gpu::overlay_tile_empty(s, tx, ty)) continue;  // nothing of it there
        const uint32_t tile = ty * tiles_x + tx;
        if (!fill) {
            if (atomicAdd(&l.counts[tile], 1u) == 0u) l.busy[atomicAdd(&l.counts[tiles + 1], 1u)] = tile;
        } else {
            l.lists[l.offsets[tile] + atomicSub(&l.counts[tile], 1u) - 1u] = i;
        }
    }
}

__global__ void link_shapes_kernel(OverlayLinkLaunch l) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= l.max_edges) return;
    OverlayShape s{};
    bool drawn = false;
    if (i < *l.edge_count) {
        const uint2 e = l.edges[i];
        drawn = gpu::overlay_curve_shape(s, l.xy[2 * e.x], l.xy[2 * e.x + 1], l.xy[2 * e.y], l.xy[2 * e.y + 1], l.width,
                                         l.color, l.width_px, l.height_px);
    }
    if (!drawn) {  // empty bounds: binned nowhere, and no pixel's bounds test passes
        s = OverlayShape{};
        s.min_x = s.min_y = 3.0e38f;
        s.max_x = s.max_y = -3.0e38f;
    }
    l.shapes[i] = s;
}

// A frame's pixel in the blending space, and back: RGBA8 words (sRGB decoded to linear
// light where asked) or four halves, as stored.
template <bool kHalf>
__device__ gpu::OverlayPixel load_pixel(const OverlayLaunch& l, uint32_t x, uint32_t y) {
    const char* row = static_cast<const char*>(l.frame) + size_t(y) * l.pitch;
    if constexpr (kHalf) {
        const uint2 texel = reinterpret_cast<const uint2*>(row)[x];
        const float2 rg = __half22float2(*reinterpret_cast<const __half2*>(&texel.x));
        const float2 ba = __half22float2(*reinterpret_cast<const __half2*>(&texel.y));
        return {rg.x, rg.y, ba.x, ba.y};
    } else {
        return gpu::overlay_load(reinterpret_cast<const uint32_t*>(row)[x], l.srgb ? 1u : 0u);
    }
}
template <bool kHalf>
__device__ void store_pixel(const OverlayLaunch& l, uint32_t x, uint32_t y, const gpu::OverlayPixel& p) {
    char* row = static_cast<char*>(l.frame) + size_t(y) * l.pitch;
    if constexpr (kHalf) {
        const __half2 rg = __floats2half2_rn(p.r, p.g), ba = __floats2half2_rn(p.b, p.a);
        reinterpret_cast<uint2*>(row)[x] = make_uint2(*reinterpret_cast<const uint32_t*>(&rg),
                                                      *reinterpret_cast<const uint32_t*>(&ba));
    } else {
        reinterpret_cast<uint32_t*>(row)[x] = gpu::overlay_store(p, l.srgb ? 1u : 0u);
    }
}

__device__ float atlas_texel(const OverlayLaunch& l, uint32_t x, uint32_t y) {
    return float(__ldg(&l.atlas[size_t(y) * l.atlas_width + x]));
}

// A shape as one tile's pixels read it, decoded once by the tile's block: the record, its
// colours premultiplied in the blending space, and whether it covers the whole tile with
// its opaque-coverage fill (a box's interior: no distance to evaluate). Decoding per pixel
// was most of the shading's instructions (byte extraction and conversion of both colours
// for every pixel and shape).
struct TileShape {
    OverlayShape s;
    gpu::OverlayPixel fill, stroke;
    bool solid;
};
constexpr uint32_t kTileShapes = 128;  // shapes decoded per round into shared memory (12.5 KiB)

__device__ void decode(const OverlayLaunch& l, const OverlayShape& s, float x0, float y0, TileShape& out) {
    out.s = s;
    out.fill = gpu::overlay_premultiply(s.fill, l.srgb ? 1u : 0u);
    out.stroke = gpu::overlay_premultiply(s.stroke, l.srgb ? 1u : 0u);
    out.solid = gpu::overlay_box_interior_covers(s, x0, y0, x0 + float(TVLM_OVERLAY_TILE), y0 + float(TVLM_OVERLAY_TILE));
}

// Decoded shape d over the pixel (x, y), as overlay_shade.glsl composites it.
__device__ void composite(const OverlayLaunch& l, const TileShape& d, uint32_t x, uint32_t y, gpu::OverlayPixel& dst,
                          bool& touched) {
    gpu::OverlayCoverage c{1.0f, 0.0f};
    if (!d.solid) {
        const OverlayShape& s = d.s;
        if (!gpu::overlay_touches(s, float(x), float(y), float(x) + 1.0f, float(y) + 1.0f)) return;
        const float px = float(x) + 0.5f, py = float(y) + 0.5f;
        if (s.kind == TVLM_SHAPE_GLYPH) {
            const gpu::OverlayAtlasTaps a = gpu::overlay_glyph_taps(s, px, py);
            c.fill = 0.0f;
            c.stroke = gpu::overlay_glyph_coverage_of(s, a, atlas_texel(l, a.x, a.y), atlas_texel(l, a.x + 1, a.y),
                                                      atlas_texel(l, a.x, a.y + 1), atlas_texel(l, a.x + 1, a.y + 1));
        } else {
            c = gpu::overlay_shape_coverage(s, px, py);
        }
        if (!(c.fill > 0.0f || c.stroke > 0.0f)) return;
    }
    dst = gpu::overlay_over_premultiplied(dst, d.fill, d.stroke, c);
    touched = true;
}

// A tile's list of at most 32 shapes (almost every tile's), sorted into scene order and
// decoded by the first warp alone: shuffles, no block-wide barriers (which were a third of
// the shading's stalls when the whole block sorted every list).
__device__ void decode_short_list(const OverlayLaunch& l, uint32_t lane, uint32_t first, uint32_t n, float x0, float y0,
                                  TileShape* decoded) {
    uint32_t v = lane < n ? l.lists[first + lane] : ~0u;
    for (uint32_t k = 2; k <= 32; k <<= 1)
        for (uint32_t j = k >> 1; j > 0; j >>= 1) {
            const uint32_t partner = __shfl_xor_sync(0xffffffffu, v, j);
            v = (((lane & k) == 0) == ((lane & j) == 0)) ? min(v, partner) : max(v, partner);
        }
    if (lane < n) decode(l, l.shapes[v], x0, y0, decoded[lane]);
}

// The busy tiles, a block per tile at a time and a thread per pixel. A list of up to 32
// shapes is sorted and decoded by one warp (above); a longer one is sorted into scene order
// in shared memory by the block (bitonic, padded with ~0u), or, past TVLM_OVERLAY_SORTED,
// replaced by a walk over every shape in order, and its shapes decoded kTileShapes at a
// time. Every pixel then composites the decoded shapes in order.
// Six blocks per multiprocessor (40 registers): left to itself the compiler takes 60 and
// fits four, and the shading waits on more latency than it saves.
template <bool kHalf>
__global__ void __launch_bounds__(TVLM_OVERLAY_THREADS, 6) shade_kernel(OverlayLaunch l, uint32_t tiles_x, uint32_t tiles) {
    __shared__ uint32_t sorted[TVLM_OVERLAY_SORTED];
    __shared__ TileShape decoded[kTileShapes];
    const uint32_t t = threadIdx.y * TVLM_OVERLAY_TILE + threadIdx.x;
    const uint32_t busy_tiles = l.counts[tiles + 1];
    for (uint32_t b = blockIdx.x; b < busy_tiles; b += gridDim.x) {
        const uint32_t tile = l.busy[b], first = l.offsets[tile], n = l.offsets[tile + 1] - first;
        const uint32_t x0 = tile % tiles_x * TVLM_OVERLAY_TILE, y0 = tile / tiles_x * TVLM_OVERLAY_TILE;
        const uint32_t x = x0 + threadIdx.x, y = y0 + threadIdx.y;
        const bool inside = x < l.width && y < l.height;
        gpu::OverlayPixel dst{};
        if (inside) dst = load_pixel<kHalf>(l, x, y);
        bool touched = false;
        __syncthreads();  // the previous tile's shapes are no longer read
        if (n <= 32) {  // n is the block's: every thread takes the same branch
            if (t < 32) decode_short_list(l, t, first, n, float(x0), float(y0), decoded);  // the first warp
            __syncthreads();
            if (inside)
                for (uint32_t i = 0; i < n; ++i) composite(l, decoded[i], x, y, dst, touched);
        } else {
            const bool listed = n <= TVLM_OVERLAY_SORTED;
            if (listed) {
                uint32_t size = 1;
                while (size < n) size <<= 1;
                for (uint32_t i = t; i < size; i += TVLM_OVERLAY_THREADS) sorted[i] = i < n ? l.lists[first + i] : ~0u;
                __syncthreads();
                for (uint32_t k = 2; k <= size; k <<= 1)
                    for (uint32_t j = k >> 1; j > 0; j >>= 1) {
                        for (uint32_t i = t; i < size; i += TVLM_OVERLAY_THREADS) {
                            const uint32_t partner = i ^ j;
                            if (partner > i) {
                                const bool ascending = (i & k) == 0;
                                const uint32_t a = sorted[i], c = sorted[partner];
                                if ((a > c) == ascending) {
                                    sorted[i] = c;
                                    sorted[partner] = a;
                                }
                            }
                        }
                        __syncthreads();
                    }
            }
            const uint32_t count = listed ? n : l.shape_count;
            for (uint32_t round = 0; round < count; round += kTileShapes) {
                const uint32_t here = min(kTileShapes, count - round);
                __syncthreads();  // the previous round's shapes are no longer read
                if (t < here) decode(l, l.shapes[listed ? sorted[round + t] : round + t], float(x0), float(y0), decoded[t]);
                __syncthreads();
                if (inside)
                    for (uint32_t i = 0; i < here; ++i) composite(l, decoded[i], x, y, dst, touched);
            }
        }
        if (touched) store_pixel<kHalf>(l, x, y, dst);
    }
}

// Blocks that fill the GPU once: the shading grid walks the busy tiles with that many.
// Asked of the runtime once per device and kernel, not on every draw (a draw's host time
// is part of a video frame's).
template <bool kHalf>
uint32_t resident_shade_blocks() {
    constexpr int kDevices = 64;
    static std::atomic<uint32_t> known[kDevices] = {};
    int device = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&device));
    if (device < kDevices && known[device].load(std::memory_order_relaxed)) return known[device].load(std::memory_order_relaxed);
    const int sms = current_device_multiprocessors();
    int per_sm = 0;
    TVLM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, shade_kernel<kHalf>, TVLM_OVERLAY_THREADS, 0));
    const auto blocks = uint32_t(std::max(1, sms * per_sm));
    if (device < kDevices) known[device].store(blocks, std::memory_order_relaxed);
    return blocks;
}

}  // namespace

void launch_overlay(const OverlayLaunch& l, cudaStream_t stream) {
    const uint32_t tiles_x = (l.width + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE;
    const uint32_t tiles = tiles_x * ((l.height + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE);
    if (!l.shape_count) return;
    TVLM_CUDA_CHECK(cudaMemsetAsync(l.counts, 0, (size_t(tiles) + 2) * sizeof(uint32_t), stream));
    bin_kernel<<<l.shape_count, 128, 0, stream>>>(l, tiles_x, tiles, false);
    // The counts' exclusive prefix sum by CUB (tiles + 1 entries: the last is the total;
    // counts[tiles] is the zeroed extra entry).
    size_t scratch_bytes = l.scan_scratch_bytes;
    TVLM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(l.scan_scratch, scratch_bytes, l.counts, l.offsets, int(tiles + 1), stream));
    bin_kernel<<<l.shape_count, 128, 0, stream>>>(l, tiles_x, tiles, true);
    const dim3 block(TVLM_OVERLAY_TILE, TVLM_OVERLAY_TILE);
    const uint32_t bound = std::max(1u, std::min(l.busy_bound, tiles));
    if (l.half) shade_kernel<true><<<std::min(bound, resident_shade_blocks<true>()), block, 0, stream>>>(l, tiles_x, tiles);
    else shade_kernel<false><<<std::min(bound, resident_shade_blocks<false>()), block, 0, stream>>>(l, tiles_x, tiles);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

void launch_overlay_links(const OverlayLinkLaunch& l, cudaStream_t stream) {
    if (!l.max_edges) return;
    link_shapes_kernel<<<(l.max_edges + 127) / 128, 128, 0, stream>>>(l);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

size_t overlay_scan_scratch_bytes(uint32_t tiles) {
    size_t bytes = 0;
    TVLM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<uint32_t*>(nullptr),
                                                  static_cast<uint32_t*>(nullptr), int(tiles + 1)));
    return bytes;
}

}  // namespace tvlm
