#include "overlay.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <type_traits>

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

// A frame's pixels as stored: an RGBA8 word or four halves.
template <bool kHalf>
using FrameTexel = std::conditional_t<kHalf, uint2, uint32_t>;

// A frame's pixel in the blending space, and back: RGBA8 words (sRGB decoded to linear
// light where asked) or four halves, as stored.
__device__ gpu::OverlayPixel unpack_pixel(const OverlayLaunch&, uint2 texel) {
    const float2 rg = __half22float2(*reinterpret_cast<const __half2*>(&texel.x));
    const float2 ba = __half22float2(*reinterpret_cast<const __half2*>(&texel.y));
    return {rg.x, rg.y, ba.x, ba.y};
}
__device__ gpu::OverlayPixel unpack_pixel(const OverlayLaunch& l, uint32_t texel) {
    return gpu::overlay_load(texel, l.srgb ? 1u : 0u);
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

// The pixel warps of a shading block each own an 8x4 block of the tile's 16x16 pixels
// (warp w: columns 8 * (w % 2) ..., rows 4 * (w / 2) ...), so a shape's edge crossing a tile
// concerns only some of them; a warp skips a shape none of its pixels can show, as a whole
// (no divergence), and a block wholly inside a box's fill takes its colour without a distance.
constexpr uint32_t kWarpBlockWidth = 8, kWarpBlockHeight = 4;
__device__ uint32_t pixel_x(uint32_t t) { return (t / 32) % 2 * kWarpBlockWidth + t % kWarpBlockWidth; }
__device__ uint32_t pixel_y(uint32_t t) { return (t / 32) / 2 * kWarpBlockHeight + t % 32 / kWarpBlockWidth; }

// Whether shape s changes no pixel of [x0, x0 + kWarpBlockWidth) x [y0, y0 + kWarpBlockHeight):
// outside its bounds, inside an outlined box, or further from a line or curve than any of
// the block's pixels reaches (as overlay_tile_empty decides for whole tiles).
__device__ bool block_empty(const OverlayShape& s, float x0, float y0) {
    const float x1 = x0 + float(kWarpBlockWidth), y1 = y0 + float(kWarpBlockHeight);
    if (!gpu::overlay_touches(s, x0, y0, x1, y1)) return true;
    const float cx = 0.5f * (x0 + x1), cy = 0.5f * (y0 + y1);
    const float corner = gpu::sqrt(0.25f * float((kWarpBlockWidth - 1) * (kWarpBlockWidth - 1) +
                                                 (kWarpBlockHeight - 1) * (kWarpBlockHeight - 1)));
    const float reach = s.half_width + 0.5f + corner + 0.5f;
    if (s.kind == TVLM_SHAPE_SEGMENT) return gpu::overlay_segment_distance(cx, cy, s.x0, s.y0, s.x1, s.y1) > reach;
    if (s.kind == TVLM_SHAPE_CURVE) return gpu::overlay_bezier_distance(cx, cy, s.x0, s.y0, s.cx, s.cy, s.x1, s.y1) > reach;
    return gpu::overlay_box_hollow_over(s, x0, y0, x1, y1);
}

// A shape as one tile's pixels read it, decoded once per tile: the record, its colours
// premultiplied in the blending space, a box's per-pixel constants, and per pixel warp
// whether it may change that warp's pixels and whether they all lie in a box's fill
// (coverage 1, no distance to evaluate). Decoding per pixel was most of the shading's
// instructions (byte extraction and conversion of both colours for every pixel and shape).
struct TileShape {
    OverlayShape s;
    float4 box;  // half size less the corner radius (x, y); 0.5 + radius (z), less the stroke (w)
    gpu::OverlayPixel fill, stroke;
    uint32_t warps;  // bit w: pixel warp w draws the shape
    uint32_t solid;  // bit w: ... from its fill alone
};
constexpr uint32_t kTileShapes = 128;  // shapes decoded per round into shared memory (14 KiB)

__device__ void decode(const OverlayShape& s, uint32_t srgb, TileShape& out) {
    out.s = s;
    out.fill = gpu::overlay_premultiply(s.fill, srgb);
    out.stroke = gpu::overlay_premultiply(s.stroke, srgb);
    const float r = fminf(s.radius, fminf(s.x1, s.y1));
    out.box = make_float4(s.x1 - r, s.y1 - r, 0.5f + r, 0.5f + r - 2.0f * s.half_width);
}

// Whether pixel warp w of the tile at (x0, y0) draws shape s, and whether from its fill
// alone (its pixels all inside a box's fill; an outlined box's interior is neither).
struct WarpShare {
    bool draws;
    bool solid;
};
__device__ WarpShare warp_share(const OverlayShape& s, float x0, float y0, uint32_t w) {
    const float bx = x0 + float(w % 2 * kWarpBlockWidth), by = y0 + float(w / 2 * kWarpBlockHeight);
    const bool draws = !block_empty(s, bx, by);
    return {draws, draws && gpu::overlay_box_interior_covers(s, bx, by, bx + float(kWarpBlockWidth),
                                                              by + float(kWarpBlockHeight))};
}

// The warps' shares of decoded shapes [0, n), a warp's 32 lanes testing four shapes for the
// eight pixel warps at a time (a lane testing one shape for all eight made the preparing
// warp the shading's critical path: H100, 1000 boxes 152 -> 264 us).
__device__ void share_out(TileShape* decoded, uint32_t n, uint32_t lane, float x0, float y0) {
    constexpr uint32_t kWarps = TVLM_OVERLAY_THREADS / 32, kPerRound = 32 / kWarps;
    __syncwarp();
    for (uint32_t first = 0; first < n; first += kPerRound) {
        const uint32_t i = first + lane / kWarps;
        WarpShare share{false, false};
        if (i < n) share = warp_share(decoded[i].s, x0, y0, lane % kWarps);
        const uint32_t draws = __ballot_sync(0xffffffffu, share.draws), solid = __ballot_sync(0xffffffffu, share.solid);
        if (i < n && lane % kWarps == 0) {
            decoded[i].warps = draws >> lane & ((1u << kWarps) - 1u);
            decoded[i].solid = solid >> lane & ((1u << kWarps) - 1u);
        }
    }
}

// A box's coverage of the pixel centred at (px, py), from its decoded constants: the
// rounded box's distance (overlay_round_box_distance) plus its radius, through the ramps.
__device__ gpu::OverlayCoverage box_coverage(const TileShape& d, float px, float py) {
    const float qx = fabsf(px - d.s.x0) - d.box.x, qy = fabsf(py - d.s.y0) - d.box.y;
    const float ox = fmaxf(qx, 0.0f), oy = fmaxf(qy, 0.0f);
    const float beyond_radius = gpu::sqrt(ox * ox + oy * oy) + fminf(fmaxf(qx, qy), 0.0f);
    const float outer = __saturatef(d.box.z - beyond_radius), inner = __saturatef(d.box.w - beyond_radius);
    return {inner, outer - inner};
}

// Decoded shape d over the pixel (x, y), as overlay_shade.glsl composites it; `solid`:
// the pixel lies in the box's fill.
__device__ void composite(const OverlayLaunch& l, const TileShape& d, bool solid, uint32_t x, uint32_t y,
                          gpu::OverlayPixel& dst, bool& touched) {
    gpu::OverlayCoverage c{1.0f, 0.0f};
    if (!solid) {
        const OverlayShape& s = d.s;
        if (!gpu::overlay_touches(s, float(x), float(y), float(x) + 1.0f, float(y) + 1.0f)) return;
        const float px = float(x) + 0.5f, py = float(y) + 0.5f;
        if (s.kind == TVLM_SHAPE_BOX) {
            c = box_coverage(d, px, py);
        } else if (s.kind == TVLM_SHAPE_GLYPH) {
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

// Every shape of `list` (n decoded shapes) that pixel warp `warp` draws, over its pixel.
__device__ void composite_list(const OverlayLaunch& l, const TileShape* list, uint32_t n, uint32_t warp, uint32_t x,
                               uint32_t y, gpu::OverlayPixel& dst, bool& touched) {
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t warps = list[i].warps;
        if ((warps >> warp & 1u) != 0u) composite(l, list[i], (list[i].solid >> warp & 1u) != 0u, x, y, dst, touched);
    }
}

// Asynchronous copies into shared memory (cp.async): the preparing warp fetches what the
// next tiles need without holding it in registers (held, the loads' results were spilled,
// and the spill's store waited for them).
template <uint32_t kBytes>  // 4, 8 or 16, the addresses aligned to it
__device__ void copy_async(void* shared_target, const void* source) {
    const auto target = uint32_t(__cvta_generic_to_shared(shared_target));
    if constexpr (kBytes == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(target), "l"(source) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(target), "l"(source), "n"(kBytes) : "memory");
}
__device__ void copy_async_wait() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// The preparing warp copies tile (tx, ty)'s pixels of the frame into `texels` (row-major),
// so the pixel warps read their pixel from shared memory instead of waiting on the frame's
// load at the start of every tile; pixels past the frame's edge are not read.
template <bool kHalf>
__device__ void fetch_tile_pixels(const OverlayLaunch& l, uint32_t lane, uint32_t tx, uint32_t ty, FrameTexel<kHalf>* texels) {
    constexpr uint32_t kBytes = sizeof(FrameTexel<kHalf>);
    for (uint32_t i = lane; i < TVLM_OVERLAY_THREADS; i += 32) {
        const uint32_t x = tx * TVLM_OVERLAY_TILE + i % TVLM_OVERLAY_TILE, y = ty * TVLM_OVERLAY_TILE + i / TVLM_OVERLAY_TILE;
        if (x >= l.width || y >= l.height) continue;
        const char* source = static_cast<const char*>(l.frame) + size_t(y) * l.pitch + size_t(x) * kBytes;
        copy_async<kBytes>(texels + i, source);
    }
}

// What the preparing warp of a shading block hands the pixel warps for one tile.
template <bool kHalf>
struct TileSlot {
    TileShape shapes[kOverlayTileList];  // its list, sorted and decoded, where it has at most kOverlayTileList
    FrameTexel<kHalf> texels[TVLM_OVERLAY_THREADS];  // its pixels of the frame, row-major
    uint32_t tile;
    uint32_t count;  // its shapes
};

// A tile's list as binned (the first kOverlayTileList entries, in no order) and its count,
// fetched a tile ahead; then its shape records, as listed.
struct ListStage {
    uint32_t entries[kOverlayTileList];
    uint32_t count;
};
struct PreparerShared {
    alignas(16) OverlayShape listed[kOverlayTileList];  // the tile being prepared: its shapes in list order
    ListStage lists[2];                                 // tile j's in lists[j % 2]
};

// The preparing warp of a shading block, walking the block's busy tiles j = 0, 1, ...
// (busy tiles blockIdx.x + j * gridDim.x) one ahead of the pixel warps. Tile j + 1's list
// and count are fetched while tile j is prepared, the numbers of 32 tiles come in one load,
// and a tile's shape records are fetched while its list is sorted: preparing a tile waits
// on one round trip, overlapped, instead of three in a chain (tile number, then its count
// and list, then the shapes), which made the preparing warp the shading's critical path
// (ncu, H100, 1000 boxes: pixel warps busy 28% of the time, the preparing warp 95%).
template <bool kHalf>
struct Preparer {
    const OverlayLaunch& l;
    PreparerShared& stage;
    uint32_t tiles_x, lane, tiles;  // tiles: the block's busy tiles
    uint32_t batch = 0;             // lane i: the block's tile 32 * (j / 32) + i, j the last asked for
    uint32_t next = 0;              // the number of the tile fetched last

    __device__ uint32_t busy_tile(uint32_t j) {
        if (j % 32 == 0) batch = j + lane < tiles ? l.busy[blockIdx.x + (j + lane) * gridDim.x] : 0u;
        return __shfl_sync(0xffffffffu, batch, j % 32);
    }
    // Tile j's number, list and count, fetched into lists[j % 2].
    __device__ void fetch_list(uint32_t j) {
        next = busy_tile(j);
        ListStage& to = stage.lists[j % 2];
        copy_async<4>(&to.entries[lane], &l.lists[size_t(next) * kOverlayTileList + lane]);
        if (lane == 0) copy_async<4>(&to.count, &l.counts[next]);
    }
    // Tile j (fetched): its pixels, and its list of up to kOverlayTileList shapes sorted into
    // scene order and decoded, into `slot`; tile j + 1's list fetched.
    __device__ void prepare(uint32_t j, TileSlot<kHalf>& slot) {
        const uint32_t tile = next, tx = tile % tiles_x, ty = tile / tiles_x;
        const ListStage& from = stage.lists[j % 2];
        const uint32_t n = from.count, entry = from.entries[lane];
        if (lane == 0) l.counts[tile] = 0u;  // for the next draw; no other warp reads it
        fetch_tile_pixels<kHalf>(l, lane, tx, ty, slot.texels);
        const bool listed = n <= kOverlayTileList && lane < n;
        if (listed)
            for (uint32_t part = 0; part < sizeof(OverlayShape) / 16; ++part)
                copy_async<16>(reinterpret_cast<char*>(&stage.listed[lane]) + 16 * part,
                              reinterpret_cast<const char*>(&l.shapes[entry]) + 16 * part);
        __syncwarp();  // lists[j % 2] read by every lane before it is fetched into again
        if (j + 1 < tiles) fetch_list(j + 1);
        if (n <= kOverlayTileList) {
            // Scene order: a bitonic sort of (shape, lane) by shuffles; indices below 2^27
            // (kOverlayMaxShapes) leave the low 5 bits for the lane whose record it is.
            uint32_t key = listed ? entry << 5 | lane : ~0u;
            for (uint32_t k = 2; k <= 32; k <<= 1)
                for (uint32_t i = k >> 1; i > 0; i >>= 1) {
                    const uint32_t partner = __shfl_xor_sync(0xffffffffu, key, i);
                    key = (((lane & k) == 0) == ((lane & i) == 0)) ? min(key, partner) : max(key, partner);
                }
            copy_async_wait();
            __syncwarp();
            if (lane < n) decode(stage.listed[key & 31u], l.srgb ? 1u : 0u, slot.shapes[lane]);
            share_out(slot.shapes, n, lane, float(tx * TVLM_OVERLAY_TILE), float(ty * TVLM_OVERLAY_TILE));
        }
        if (lane == 0) slot.tile = tile, slot.count = n;
        copy_async_wait();
    }
};

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
    __shared__ TileSlot<kHalf> slots[2];
    __shared__ PreparerShared stage;
    __shared__ TileShape walked[kTileShapes];
    __shared__ uint32_t walk_counts[kPixelWarps];
    await_previous_kernel();
    const uint32_t t = threadIdx.x, lane = t % 32, warp = t / 32;
    const bool preparer = warp == kPixelWarps;
    const uint32_t busy_tiles = l.busy_counts[l.parity];
    if (blockIdx.x == 0 && t == 0) l.busy_counts[1 - l.parity] = 0u;  // the last draw's, which it read
    const uint32_t tiles = busy_tiles > blockIdx.x ? (busy_tiles - blockIdx.x + gridDim.x - 1) / gridDim.x : 0u;
    Preparer<kHalf> preparing{l, stage, tiles_x, lane, tiles};
    if (preparer && tiles) {
        preparing.fetch_list(0);
        copy_async_wait();
        __syncwarp();
        preparing.prepare(0, slots[0]);
    }
    __syncthreads();
    for (uint32_t j = 0; j < tiles; ++j) {
        const uint32_t slot = j % 2;
        if (preparer) {
            if (j + 1 < tiles) preparing.prepare(j + 1, slots[slot ^ 1u]);
        } else {
            const TileSlot<kHalf>& prepared = slots[slot];
            const uint32_t tile = prepared.tile, n = prepared.count;
            const uint32_t tx = tile % tiles_x, ty = tile / tiles_x;
            const uint32_t x0 = tx * TVLM_OVERLAY_TILE, y0 = ty * TVLM_OVERLAY_TILE;
            const uint32_t px = pixel_x(t), py = pixel_y(t), x = x0 + px, y = y0 + py;
            const bool inside = x < l.width && y < l.height;
            gpu::OverlayPixel dst{};
            if (inside) dst = unpack_pixel(l, prepared.texels[py * TVLM_OVERLAY_TILE + px]);
            bool touched = false;
            if (n <= kOverlayTileList) {
                if (inside) composite_list(l, prepared.shapes, n, warp, x, y, dst, touched);
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
                    if (in) {  // every warp evaluates it (exact, and rare: tiles of more than 32 shapes)
                        decode(s, l.srgb ? 1u : 0u, walked[at]);
                        walked[at].warps = ~0u;
                        walked[at].solid = 0u;
                    }
                    pixels_sync();
                    if (inside) composite_list(l, walked, here, warp, x, y, dst, touched);
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
