#include "overlay.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>

#include "cuda_check.h"
#include "cuda_devices.h"
#include "early_launch.cuh"

namespace tvlm {

namespace {

using gpu::OverlayShape;

// Link i of the device's graph as a curve shape, or, past the frame's links, a shape with
// empty bounds (binned nowhere, and no pixel's bounds test passes).
__device__ OverlayShape link_shape(const OverlayLinks& l, uint32_t i, uint32_t width_px, uint32_t height_px) {
    OverlayShape s{};
    bool drawn = false;
    if (i < *l.edge_count) {
        const uint2 e = l.edges[i];
        drawn = gpu::overlay_curve_shape(s, l.xy[2 * e.x], l.xy[2 * e.x + 1], l.xy[2 * e.y], l.xy[2 * e.y + 1], l.width,
                                         l.color, width_px, height_px);
    }
    if (!drawn) {
        s = OverlayShape{};
        s.min_x = s.min_y = 3.0e38f;
        s.max_x = s.max_y = -3.0e38f;
    }
    return s;
}

// Whether shape s is in tile (tx, ty)'s list: within its bounds' tiles and changing some
// pixel of the tile (overlay_tile_empty). The binning pass and the shading's walk over
// every shape (a tile of more than kOverlayTileList shapes) list the same shapes.
__device__ bool in_tile(const OverlayShape& s, uint32_t tx, uint32_t ty) {
    if (!(s.min_x <= s.max_x && s.min_y <= s.max_y)) return false;  // an unused link slot
    return int(tx) >= gpu::overlay_tile_of(s.min_x) && int(tx) <= gpu::overlay_tile_of(s.max_x) &&
           int(ty) >= gpu::overlay_tile_of(s.min_y) && int(ty) <= gpu::overlay_tile_of(s.max_y) &&
           !gpu::overlay_tile_empty(s, tx, ty);
}

// One pass, a block per shape, its threads over the tiles its bounds touch (a large shape's
// hundreds of tiles in parallel): each (shape, tile) pair takes the next slot of the tile's
// count; the first notes the tile in the busy list, the first kOverlayTileList write the shape
// into the tile's fixed list. A count, a prefix sum and a filling pass did this in three
// launches (H100, 100 boxes with labels: 6.0 + 2.3 + 4.7 + 5.4 us and the gaps between).
// The pass also reads the shapes from pinned host memory (a copy before it cost its own
// operation and a gap) and makes the device links' shapes (a launch of their own cost
// ~3 us a draw, most of it the gap before the next launch), writing both where the
// shading reads them.
__global__ void bin_kernel(OverlayLaunch l, uint32_t tiles_x) {
    await_previous_kernel();
    const uint32_t i = blockIdx.x;
    __shared__ OverlayShape made;
    if (threadIdx.x == 0) {  // the shape, into device memory for the shading
        if (i - l.links.first < l.links.max_edges) made = l.shapes[i] = link_shape(l.links, i - l.links.first, l.width, l.height);
        else made = l.shapes[i] = l.staged[i];
    }
    __syncthreads();
    const OverlayShape s = made;
    if (!(s.min_x <= s.max_x && s.min_y <= s.max_y)) return;  // an unused link slot: nothing to draw
    const int tx0 = gpu::overlay_tile_of(s.min_x), ty0 = gpu::overlay_tile_of(s.min_y);
    const uint32_t across = uint32_t(gpu::overlay_tile_of(s.max_x) - tx0 + 1);
    const uint32_t count = across * uint32_t(gpu::overlay_tile_of(s.max_y) - ty0 + 1);
    for (uint32_t k = threadIdx.x; k < count; k += blockDim.x) {
        const uint32_t tx = uint32_t(tx0) + k % across, ty = uint32_t(ty0) + k / across;
        if (gpu::overlay_tile_empty(s, tx, ty)) continue;  // nothing of it there
        const uint32_t tile = ty * tiles_x + tx, slot = atomicAdd(&l.counts[tile], 1u);
        if (slot == 0u) l.busy[atomicAdd(&l.busy_counts[l.parity], 1u)] = tile;
        if (slot < kOverlayTileList) l.lists[size_t(tile) * kOverlayTileList + slot] = i;
    }
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

// A shape as one tile's pixels read it, decoded once per tile: the record, its
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

// A tile's list of at most kOverlayTileList = 32 shapes (almost every tile's), one entry
// per lane, sorted into scene order by shuffles and decoded.
__device__ void decode_short_list(const OverlayLaunch& l, uint32_t lane, uint32_t entry, uint32_t n, float x0, float y0,
                                  TileShape* decoded) {
    uint32_t v = lane < n ? entry : ~0u;
    for (uint32_t k = 2; k <= 32; k <<= 1)
        for (uint32_t j = k >> 1; j > 0; j >>= 1) {
            const uint32_t partner = __shfl_xor_sync(0xffffffffu, v, j);
            v = (((lane & k) == 0) == ((lane & j) == 0)) ? min(v, partner) : max(v, partner);
        }
    if (lane < n) decode(l, l.shapes[v], x0, y0, decoded[lane]);
}

// The preparing warp of a shading block: tile `tile`'s count (zeroed once read, for the
// next draw; no other warp reads it) and its list of up to kOverlayTileList shapes, sorted
// and decoded into `decoded`, then the tile and its count into the slot's header.
__device__ void prepare_tile(const OverlayLaunch& l, uint32_t tiles_x, uint32_t lane, uint32_t tile, TileShape* decoded,
                             uint32_t* slot_tile, uint32_t* slot_count) {
    const uint32_t entry = l.lists[size_t(tile) * kOverlayTileList + lane];
    uint32_t n = 0;
    if (lane == 0) {
        n = l.counts[tile];
        l.counts[tile] = 0u;
    }
    n = __shfl_sync(0xffffffffu, n, 0);
    if (n <= kOverlayTileList)
        decode_short_list(l, lane, entry, n, float(tile % tiles_x * TVLM_OVERLAY_TILE),
                          float(tile / tiles_x * TVLM_OVERLAY_TILE), decoded);
    if (lane == 0) *slot_tile = tile, *slot_count = n;
}

// The 256 pixel threads of a shading block wait for each other (a named barrier: the
// preparing warp goes on).
__device__ void pixels_sync() { asm volatile("bar.sync 1, 256;" ::: "memory"); }

// The busy tiles, a block per tile at a time: eight warps composite a tile's pixels (a
// thread each) while a ninth prepares the block's next tile into the other of two slots
// (its count, zeroed once read for the next draw; its list of up to kOverlayTileList
// shapes, sorted into scene order and decoded), so a tile's chain of dependent loads (busy
// tile, count and list, shape records) runs while the tile before it shades, with one
// barrier between tiles (with the first warp doing both in turn, H100: 100 boxes with
// labels 47.5-48.2 -> 46.3-46.4 us, 1000 boxes 155 -> 151-153 us). A tile of more shapes is
// walked by the pixel warps: every shape in scene order, kTileShapes at a time, the ones in
// the tile (in_tile) compacted in order by ballots and decoded. Block 0 zeroes the last
// draw's busy count. Four blocks per multiprocessor, 56 registers (H100, 1000 boxes: 151 us;
// five blocks, 40 registers and spills: 154 us; three: 165 us).
constexpr uint32_t kPixelWarps = TVLM_OVERLAY_THREADS / 32, kShadeThreads = TVLM_OVERLAY_THREADS + 32;
template <bool kHalf>
__global__ void __launch_bounds__(kShadeThreads, 4) shade_kernel(OverlayLaunch l, uint32_t tiles_x) {
    __shared__ TileShape decoded[2][kOverlayTileList];
    __shared__ TileShape walked[kTileShapes];
    __shared__ uint32_t slot_tile[2], slot_count[2], walk_counts[kPixelWarps];
    await_previous_kernel();
    const uint32_t t = threadIdx.x, lane = t % 32, warp = t / 32;
    const bool preparer = warp == kPixelWarps;
    const uint32_t busy_tiles = l.busy_counts[l.parity];
    if (blockIdx.x == 0 && t == 0) l.busy_counts[1 - l.parity] = 0u;  // the last draw's, which it read
    if (preparer && blockIdx.x < busy_tiles) prepare_tile(l, tiles_x, lane, l.busy[blockIdx.x], decoded[0], slot_tile, slot_count);
    __syncthreads();
    uint32_t slot = 0;
    for (uint32_t b = blockIdx.x; b < busy_tiles; b += gridDim.x, slot ^= 1u) {
        if (preparer) {
            if (b + gridDim.x < busy_tiles)
                prepare_tile(l, tiles_x, lane, l.busy[b + gridDim.x], decoded[slot ^ 1u], slot_tile + (slot ^ 1u),
                             slot_count + (slot ^ 1u));
        } else {
            const uint32_t tile = slot_tile[slot], n = slot_count[slot];
            const uint32_t tx = tile % tiles_x, ty = tile / tiles_x;
            const uint32_t x0 = tx * TVLM_OVERLAY_TILE, y0 = ty * TVLM_OVERLAY_TILE;
            const uint32_t x = x0 + t % TVLM_OVERLAY_TILE, y = y0 + t / TVLM_OVERLAY_TILE;
            const bool inside = x < l.width && y < l.height;
            gpu::OverlayPixel dst{};
            if (inside) dst = load_pixel<kHalf>(l, x, y);
            bool touched = false;
            if (n <= kOverlayTileList) {
                if (inside)
                    for (uint32_t i = 0; i < n; ++i) composite(l, decoded[slot][i], x, y, dst, touched);
            } else {
                for (uint32_t round = 0; round < l.shape_count; round += kTileShapes) {
                    OverlayShape s{};
                    const bool in = t < kTileShapes && round + t < l.shape_count && in_tile(s = l.shapes[round + t], tx, ty);
                    const uint32_t votes = __ballot_sync(0xffffffffu, in);
                    if (lane == 0) walk_counts[warp] = __popc(votes);
                    pixels_sync();
                    uint32_t at = __popc(votes & ((1u << lane) - 1u)), here = 0;
                    for (uint32_t w = 0; w < kPixelWarps; ++w) {
                        at += w < warp ? walk_counts[w] : 0u;
                        here += walk_counts[w];
                    }
                    if (in) decode(l, s, float(x0), float(y0), walked[at]);
                    pixels_sync();
                    if (inside)
                        for (uint32_t i = 0; i < here; ++i) composite(l, walked[i], x, y, dst, touched);
                    pixels_sync();  // this round's shapes and counts are no longer read
                }
            }
            if (touched) store_pixel<kHalf>(l, x, y, dst);
        }
        __syncthreads();  // the next tile's slot is ready, this one's free
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
    TVLM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, shade_kernel<kHalf>, kShadeThreads, 0));
    const auto blocks = uint32_t(std::max(1, sms * per_sm));
    if (device < kDevices) known[device].store(blocks, std::memory_order_relaxed);
    return blocks;
}

}  // namespace

// The shading is launched early (early_launch.cuh): its launch overlaps the binning.
void launch_overlay(const OverlayLaunch& l, cudaStream_t stream) {
    const uint32_t tiles_x = (l.width + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE;
    const uint32_t tiles = tiles_x * ((l.height + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE);
    if (!l.shape_count) return;
    if (!l.counts_zeroed) TVLM_CUDA_CHECK(cudaMemsetAsync(l.busy_counts, 0, (size_t(tiles) + 2) * sizeof(uint32_t), stream));
    bin_kernel<<<l.shape_count, 128, 0, stream>>>(l, tiles_x);
    const dim3 block(kShadeThreads);
    const uint32_t bound = std::max(1u, std::min(l.busy_bound, tiles));
    if (l.half) launch_kernel_early(shade_kernel<true>, dim3(std::min(bound, resident_shade_blocks<true>())), block, stream, true, l, tiles_x);
    else launch_kernel_early(shade_kernel<false>, dim3(std::min(bound, resident_shade_blocks<false>())), block, stream, true, l, tiles_x);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tvlm
