#include "cuda/overlay/overlay.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <string>
#include <type_traits>

#include "cuda/cuda_check.h"
#include "cuda/min_blocks.cuh"
#include "cuda/cuda_devices.h"
#include "cuda/early_launch.cuh"
#include "engine/error.h"

// The shading kernel uses asynchronous copies and shared-memory barriers (mbarrier.try_wait
// is sm_90's): on older GPUs (the release wheel has sm_75 to sm_89 code too) launch_overlay
// refuses the draw, and their passes compile the kernel as a trap.
#define TVLM_OVERLAY_MIN_ARCH 900
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < TVLM_OVERLAY_MIN_ARCH
#pragma nv_diag_suppress 177  // there the shading kernel is a trap, and its helpers go unused
#endif

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

// The shading's pixel warps each own an 8x4 block of a tile's 16x16 pixels (warp w:
// columns 8 * (w % 2) ..., rows 4 * (w / 2) ...), so a shape's edge crossing a tile concerns
// only some of them; a warp skips a shape none of its pixels can show, as a whole (no
// divergence), and a block wholly inside a box's fill takes its colour without a distance.
constexpr uint32_t kPixelWarps = TVLM_OVERLAY_THREADS / 32, kShadeThreads = TVLM_OVERLAY_THREADS + 32;
constexpr uint32_t kWarpBlockWidth = 8, kWarpBlockHeight = 32 / kWarpBlockWidth;
constexpr uint32_t kWarpBlocksAcross = TVLM_OVERLAY_TILE / kWarpBlockWidth;
__device__ uint32_t block_x(uint32_t warp) { return warp % kWarpBlocksAcross * kWarpBlockWidth; }
__device__ uint32_t block_y(uint32_t warp) { return warp / kWarpBlocksAcross * kWarpBlockHeight; }
__device__ uint32_t pixel_x(uint32_t t) { return block_x(t / 32) + t % kWarpBlockWidth; }
__device__ uint32_t pixel_y(uint32_t t) { return block_y(t / 32) + t % 32 / kWarpBlockWidth; }

// Which pixel warps of tile (tx, ty) draw shape s (bits 0-7: warp w's 8x4 block), and
// which of those from its fill alone (bits 8-15: the block's pixel centres all further
// inside a box than its stroke and ramp): OverlayListEntry's warps. A block is left out as
// the binning leaves out a tile (overlay_rect_empty), but curves by their bounds only:
// their exact distance at eight block centres per tile made the binning pass the links'
// largest cost.
__device__ uint32_t warp_shares(const OverlayShape& s, uint32_t tx, uint32_t ty) {
    uint32_t shares = 0;
    for (uint32_t w = 0; w < kPixelWarps; ++w) {
        const float x0 = float(tx * TVLM_OVERLAY_TILE + block_x(w)), y0 = float(ty * TVLM_OVERLAY_TILE + block_y(w));
        const float x1 = x0 + float(kWarpBlockWidth), y1 = y0 + float(kWarpBlockHeight);
        if (!gpu::overlay_touches(s, x0, y0, x1, y1)) continue;
        if (s.kind != TVLM_SHAPE_CURVE && gpu::overlay_rect_empty(s, x0, y0, x1, y1)) continue;
        shares |= (gpu::overlay_box_interior_covers(s, x0, y0, x1, y1) ? 0x101u : 1u) << w;
    }
    return shares;
}

__device__ OverlayDecodedShape decode(const OverlayShape& s, uint32_t srgb) {
    OverlayDecodedShape d;
    d.s = s;
    d.fill = gpu::overlay_premultiply(s.fill, srgb);
    d.stroke = gpu::overlay_premultiply(s.stroke, srgb);
    const float r = fminf(s.radius, fminf(s.x1, s.y1));
    d.box = make_float4(s.x1 - r, s.y1 - r, 0.5f + r, 0.5f + r - 2.0f * s.half_width);
    return d;
}

// One pass, a block per shape, its threads over the tiles its bounds touch (a large shape's
// hundreds of tiles in parallel): each (shape, tile) pair takes the next slot of the tile's
// count; the first notes the tile in the busy list, the first kOverlayTileList write the shape
// into the tile's fixed list, with the pixel warps it concerns. A count, a prefix sum and a
// filling pass did this in three launches, with gaps between. The pass also reads the shapes from pinned host memory (a
// copy before it cost its own operation and a gap), makes the device links' shapes (a
// launch of their own cost a launch gap a draw) and
// decodes each shape once for the shading. Deciding per tile which warps draw a shape, and
// decoding it, in the shading's preparing warp made that one warp the shading's critical
// path (the profiler showed that warp busy all the time).
// (Eight threads per tile, one per pixel warp, made the pass 2-3x slower: eight times the
// rounds, each waiting on its atomics.)
// Launched early, the pass reads nothing the kernel before it wrote, where the draw has no
// device links: the scene's shapes come from host memory the draw filled before the
// launch, and the buffers it writes are this draw's halves, which the shading of the draw
// before does not read (CudaOverlay alternates them). So it bins while the kernel before
// still runs (in a video loop, the previous draw's shading, whose last blocks leave SMs
// idle), and waits for that kernel only before it ends: the shading, which awaits the
// pass, still finds every earlier kernel finished. Device links are the kernel before's
// output: a draw with them waits first.
__global__ void bin_kernel(OverlayLaunch l, uint32_t tiles_x) {
    const uint32_t i = blockIdx.x;
    const bool linked = l.links.max_edges != 0u;
    allow_next_kernel();
    if (linked) wait_previous_kernel();
    __shared__ OverlayShape made;
    if (threadIdx.x == 0)
        made = i - l.links.first < l.links.max_edges ? link_shape(l.links, i - l.links.first, l.width, l.height)
                                                     : l.staged[i];
    __syncthreads();
    const OverlayShape s = made;
    if (threadIdx.x == 0) l.shapes[i] = decode(s, l.srgb ? 1u : 0u);  // for the shading, after the barrier
    if (!(s.min_x <= s.max_x && s.min_y <= s.max_y)) {                // an unused link slot: nothing to draw
        if (!linked) wait_previous_kernel();
        return;
    }
    const int tx0 = gpu::overlay_tile_of(s.min_x), ty0 = gpu::overlay_tile_of(s.min_y);
    const uint32_t across = uint32_t(gpu::overlay_tile_of(s.max_x) - tx0 + 1);
    const uint32_t count = across * uint32_t(gpu::overlay_tile_of(s.max_y) - ty0 + 1);
    for (uint32_t k = threadIdx.x; k < count; k += blockDim.x) {
        const uint32_t tx = uint32_t(tx0) + k % across, ty = uint32_t(ty0) + k / across;
        if (gpu::overlay_tile_empty(s, tx, ty)) continue;  // nothing of it there
        const uint32_t tile = ty * tiles_x + tx, slot = atomicAdd(&l.counts[tile], 1u);
        const uint32_t warps = warp_shares(s, tx, ty);  // while the atomic is under way
        if (slot == 0u) l.busy[atomicAdd(&l.busy_counts[l.turn], 1u)] = ty << 16 | tx;
        if (slot < kOverlayTileList) l.lists[size_t(tile) * kOverlayTileList + slot] = {i, warps};
    }
    if (!linked) wait_previous_kernel();
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

// A box's coverage of the pixel centred at (px, py), from its decoded constants: the
// rounded box's distance (overlay_round_box_distance) plus its radius, through the ramps.
__device__ gpu::OverlayCoverage box_coverage(const OverlayDecodedShape& d, float px, float py) {
    const float qx = fabsf(px - d.s.x0) - d.box.x, qy = fabsf(py - d.s.y0) - d.box.y;
    const float ox = fmaxf(qx, 0.0f), oy = fmaxf(qy, 0.0f);
    const float beyond_radius = gpu::sqrt(ox * ox + oy * oy) + fminf(fmaxf(qx, qy), 0.0f);
    const float outer = __saturatef(d.box.z - beyond_radius), inner = __saturatef(d.box.w - beyond_radius);
    return {inner, outer - inner};
}

// Decoded shape d over the pixel (x, y), as overlay_shade.glsl composites it; `solid`:
// the pixel lies in the box's fill.
__device__ void composite(const OverlayLaunch& l, const OverlayDecodedShape& d, bool solid, uint32_t x, uint32_t y,
                          gpu::OverlayPixel& dst, bool& touched) {
    if (solid) {  // coverage 1 of the fill, 0 of the stroke: the fill "over" the pixel
        const float keep = 1.0f - d.fill.a;
        dst = {d.fill.r + dst.r * keep, d.fill.g + dst.g * keep, d.fill.b + dst.b * keep, d.fill.a + dst.a * keep};
        touched = true;
        return;
    }
    const OverlayShape& s = d.s;
    const float px = float(x) + 0.5f, py = float(y) + 0.5f;
    gpu::OverlayCoverage c{0.0f, 0.0f};
    if (s.kind == TVLM_SHAPE_BOX) {  // no bounds test: past its bounds a box covers nothing anyway
        c = box_coverage(d, px, py);
    } else if (!gpu::overlay_touches(s, float(x), float(y), float(x) + 1.0f, float(y) + 1.0f)) {
        return;
    } else if (s.kind == TVLM_SHAPE_GLYPH) {
        const gpu::OverlayAtlasTaps a = gpu::overlay_glyph_taps(s, px, py);
        c.stroke = gpu::overlay_glyph_coverage_of(s, a, atlas_texel(l, a.x, a.y), atlas_texel(l, a.x + 1, a.y),
                                                  atlas_texel(l, a.x, a.y + 1), atlas_texel(l, a.x + 1, a.y + 1));
    } else {
        c = gpu::overlay_shape_coverage(s, px, py);
    }
    if (!(c.fill > 0.0f || c.stroke > 0.0f)) return;
    dst = gpu::overlay_over_premultiplied(dst, d.fill, d.stroke, c);
    touched = true;
}

// The OR of a full warp's values (sm_80's reduction; every architecture's pass compiles it).
__device__ uint32_t warp_or(uint32_t value) {
#if __CUDA_ARCH__ >= 800
    return __reduce_or_sync(0xffffffffu, value);
#else
    for (uint32_t offset = 16; offset; offset /= 2) value |= __shfl_xor_sync(0xffffffffu, value, offset);
    return value;
#endif
}

// Asynchronous copies into shared memory (cp.async), in commit groups: the shading fetches
// what its next tiles need without holding it in registers (held, the loads' results were
// spilled, and the spills' stores waited for them).
template <uint32_t kBytes>  // 4, 8 or 16, the addresses aligned to it
__device__ void copy_async(void* shared_target, const void* source) {
    const auto target = uint32_t(__cvta_generic_to_shared(shared_target));
    if constexpr (kBytes == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(target), "l"(source) : "memory");
    else asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(target), "l"(source), "n"(kBytes) : "memory");
}
__device__ void copy_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int kPending>  // wait until at most the kPending groups committed last are in flight
__device__ void copy_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

// Shared-memory barriers (mbarrier) handing the ring's slots between the preparing warp and
// the pixel warps: a phase completes when its count of arrivals came (a thread's, or the
// completion of a thread's asynchronous copies so far); a waiter names the parity of the
// phase it waits for.
__device__ uint32_t shared_address(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }
__device__ void barrier_init(uint64_t* barrier, uint32_t arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(barrier)), "r"(arrivals) : "memory");
}
__device__ void barrier_arrive(uint64_t* barrier) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(barrier)) : "memory");
}
__device__ void barrier_arrive_on_copies(uint64_t* barrier) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(shared_address(barrier)) : "memory");
}
__device__ bool barrier_done(uint64_t* barrier, uint32_t parity) {
    uint32_t done = 0;
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%1], %2;\n"
        "selp.u32 %0, 1, 0, done;\n"
        "}\n"
        : "=r"(done)
        : "r"(shared_address(barrier)), "r"(parity)
        : "memory");
    return done != 0u;
}
__device__ void barrier_wait(uint64_t* barrier, uint32_t parity) {
    while (!barrier_done(barrier, parity)) {}
}
// The preparing warp, often a whole ring ahead, sleeps between its looks at a slot it waits
// to be freed, leaving the issue slots to the pixel warps. (The pixel warps poll: their
// waits are mostly at a block's first tile, and sleeping there changed nothing.)
__device__ void barrier_wait_sleeping(uint64_t* barrier, uint32_t parity) {
    while (!barrier_done(barrier, parity)) __nanosleep(256);
}

// A busy tile's column and row (OverlayLaunch::busy), and its number.
struct TileAt {
    uint32_t x, y, index;
};
__device__ TileAt tile_at(uint32_t packed, uint32_t tiles_x) {
    const uint32_t x = packed & 0xffffu, y = packed >> 16;
    return {x, y, y * tiles_x + x};
}

// The busy tiles a shading block walks, j = 0, 1, ...: busy tiles blockIdx.x + j * gridDim.x,
// read 32 at a time (a lane each) by the warp asking, j in increasing order.
struct BlockTiles {
    const uint32_t* busy;
    uint32_t lane, count;  // count: the block's busy tiles
    uint32_t batch = 0;    // lane i: the block's tile 32 * (j / 32) + i, j the last asked for
    __device__ uint32_t tile(uint32_t j) {
        if (j % 32 == 0) batch = j + lane < count ? busy[blockIdx.x + (j + lane) * gridDim.x] : 0u;
        return __shfl_sync(0xffffffffu, batch, j % 32);
    }
};

// What the preparing warp hands the pixel warps for one tile: its list in scene order, where
// it has at most kOverlayTileList shapes, which of them each pixel warp draws (bit i: shape
// i) and from their fill alone, and its count.
struct TileSlot {
    OverlayDecodedShape shapes[kOverlayTileList];
    uint32_t draws[kPixelWarps];
    uint32_t solid[kPixelWarps];
    uint32_t tile;  // OverlayLaunch::busy's entry
    uint32_t count;
};

// A tile's number, its list as binned (the first kOverlayTileList entries, in no order) and
// its count, fetched two tiles ahead of its preparing.
struct ListStage {
    OverlayListEntry entries[kOverlayTileList];
    uint32_t count;
    uint32_t tile;
};

// The preparing warp of a shading block, walking the block's busy tiles ahead of the pixel
// warps: for tile j, each listed shape's rank in scene order, and its decoded record copied
// into that place of the slot (cp.async) with its warps' shares; the slot's barrier
// completes when the copies land, so the warp waits on no load of its own. Tile j + 2's list
// is fetched meanwhile. (Waiting on three loads in a chain per tile, tile number, then its
// count and list, then the shapes, the preparing warp was the shading's critical path:
// the pixel warps mostly idle while the preparing warp was always busy.)
struct Preparer {
    const OverlayLaunch& l;
    ListStage* lists;  // [3]: tile j's in lists[j % 3]
    BlockTiles tiles;
    uint32_t tiles_x, lane;

    // Tile j's number, list and count, fetched into lists[j % 3] (a commit group, empty past
    // the block's tiles).
    __device__ void fetch_list(uint32_t j) {
        if (j < tiles.count) {
            const uint32_t tile = tiles.tile(j), index = tile_at(tile, tiles_x).index;
            ListStage& to = lists[j % 3];
            copy_async<8>(&to.entries[lane], &l.lists[size_t(index) * kOverlayTileList + lane]);
            if (lane == 0) {
                copy_async<4>(&to.count, &l.counts[index]);
                to.tile = tile;
            }
        }
        copy_async_commit();
    }
    // Groups in the order L0, (empty), L1, then per tile j: R(j) (its records), L(j + 2), so
    // that before tile j only the two groups after L(j) may still be in flight.
    __device__ void start() {
        fetch_list(0);
        copy_async_commit();
        fetch_list(1);
    }
    // Tile j into `slot`, whose barrier `filled` completes when it is ready.
    __device__ void prepare(uint32_t j, TileSlot& slot, uint64_t* filled) {
        copy_async_wait<2>();  // L(j): all but the last two groups (R(j - 1), L(j + 1))
        __syncwarp();
        const ListStage& from = lists[j % 3];
        const uint32_t n = from.count, tile = from.tile;
        const OverlayListEntry entry = from.entries[lane];
        if (lane == 0) {
            l.counts[tile_at(tile, tiles_x).index] = 0u;  // for the next draw; no other warp reads it
            slot.tile = tile;
            slot.count = n;
        }
        if (n <= kOverlayTileList) {
            uint32_t rank = 0;  // scene order (a tile lists a shape once)
            for (uint32_t i = 0; i < n; ++i) rank += __shfl_sync(0xffffffffu, entry.shape, i) < entry.shape ? 1u : 0u;
            const bool listed = lane < n;
            if (listed) {
                const auto* record = reinterpret_cast<const char*>(&l.shapes[entry.shape]);
                for (uint32_t part = 0; part < sizeof(OverlayDecodedShape) / 16; ++part)
                    copy_async<16>(reinterpret_cast<char*>(&slot.shapes[rank]) + 16 * part, record + 16 * part);
            }
            // Per pixel warp, the ranks it draws: its loop visits only those.
            for (uint32_t w = 0; w < kPixelWarps; ++w) {
                const uint32_t draws = warp_or(listed && (entry.warps >> w & 1u) ? 1u << rank : 0u);
                const uint32_t solid = warp_or(listed && (entry.warps >> (w + 8) & 1u) ? 1u << rank : 0u);
                if (lane == w) slot.draws[w] = draws, slot.solid[w] = solid;
            }
        }
        copy_async_commit();
        barrier_arrive_on_copies(filled);
        barrier_arrive(filled);
        __syncwarp();       // lists[j % 3] read by every lane before the next call fetches into it
        fetch_list(j + 2);  // into lists[(j + 2) % 3], last read by the previous call
    }
};

// The 256 pixel threads of a shading block wait for each other (a named barrier: the
// preparing warp goes on).
__device__ void pixels_sync() { asm volatile("bar.sync 1, 256;" ::: "memory"); }

// The pixel warps' part of a prepared tile: thread t's pixel (its frame texel fetched
// ahead), composited with the shapes its warp draws, written back where any changed it. A
// tile of more than kOverlayTileList shapes is walked: every shape in scene order,
// kTileShapes at a time, the ones in the tile (in_tile) compacted in order by ballots, all
// pixel warps on that tile together (named barriers).
constexpr uint32_t kTileShapes = 128;  // shapes per round of a walk (14 KiB of shared memory)
template <bool kHalf>
__device__ void shade_tile(const OverlayLaunch& l, uint32_t tiles_x, uint32_t t, FrameTexel<kHalf> texel,
                           const TileSlot& prepared, OverlayDecodedShape* walked, uint32_t* walk_counts) {
    const uint32_t lane = t % 32, warp = t / 32, n = prepared.count;
    const TileAt tile = tile_at(prepared.tile, tiles_x);
    const uint32_t tx = tile.x, ty = tile.y;
    const uint32_t x = tx * TVLM_OVERLAY_TILE + pixel_x(t), y = ty * TVLM_OVERLAY_TILE + pixel_y(t);
    const bool inside = x < l.width && y < l.height;
    const uint32_t drawn = n <= kOverlayTileList ? prepared.draws[warp] : ~0u;
    if (drawn == 0u) return;  // none of the tile's shapes reaches this warp's pixels
    gpu::OverlayPixel dst = unpack_pixel(l, texel);
    bool touched = false;
    if (n <= kOverlayTileList) {
        const uint32_t solid = prepared.solid[warp];
        if (inside)
            for (uint32_t draws = drawn; draws != 0u; draws &= draws - 1u) {
                const uint32_t i = uint32_t(__ffs(int(draws))) - 1u;
                composite(l, prepared.shapes[i], (solid >> i & 1u) != 0u, x, y, dst, touched);
            }
    } else {
        for (uint32_t round = 0; round < l.shape_count; round += kTileShapes) {
            const bool in = t < kTileShapes && round + t < l.shape_count && in_tile(l.shapes[round + t].s, tx, ty);
            const uint32_t votes = __ballot_sync(0xffffffffu, in);
            if (lane == 0) walk_counts[warp] = __popc(votes);
            pixels_sync();
            uint32_t at = __popc(votes & ((1u << lane) - 1u)), here = 0;
            for (uint32_t w = 0; w < kPixelWarps; ++w) {
                at += w < warp ? walk_counts[w] : 0u;
                here += walk_counts[w];
            }
            if (in) walked[at] = l.shapes[round + t];
            pixels_sync();
            if (inside)  // every shape, by distance (exact, and rare: tiles of more than 32 shapes)
                for (uint32_t i = 0; i < here; ++i) composite(l, walked[i], false, x, y, dst, touched);
            pixels_sync();  // this round's shapes and counts are no longer read
        }
    }
    if (touched) store_pixel<kHalf>(l, x, y, dst);
}

// The busy tiles, a block per tile at a time: a preparing warp (the ninth) fills a ring of
// kRingSlots slots, each with a tile's list of up to kOverlayTileList shapes in scene order
// (Preparer), and eight pixel warps composite them, each fetching its pixel of the next tile
// while it shades one. Slots change hands through mbarriers, so a pixel warp goes on to the
// next prepared tile as soon as it is done with one: a tile's uneven work (one warp's pixels
// under three shapes, another's under none) evens out over tiles instead of idling every
// warp at a block-wide barrier per tile (where nearly half the warps' stalls were). Block 0 zeroes the last draw's busy count. Four blocks per multiprocessor, 56
// registers.
constexpr uint32_t kRingSlots = 6;  // tiles prepared ahead of the pixel warps (4 and 8 were slower)
template <bool kHalf>
__global__ void __launch_bounds__(kShadeThreads, TVLM_MIN_BLOCKS(kShadeThreads, 4))
    shade_kernel(OverlayLaunch l, uint32_t tiles_x) {
#if defined(__CUDA_ARCH__) && \
    __CUDA_ARCH__ < TVLM_OVERLAY_MIN_ARCH  // cp.async, mbarriers: launch_overlay refuses first
    __trap();
#else
    __shared__ TileSlot slots[kRingSlots];
    __shared__ uint64_t filled[kRingSlots], emptied[kRingSlots];
    __shared__ ListStage lists[3];
    __shared__ OverlayDecodedShape walked[kTileShapes];
    __shared__ uint32_t walk_counts[kPixelWarps];
    __shared__ FrameTexel<kHalf> texels[2][TVLM_OVERLAY_THREADS];  // the pixel threads' texels, fetched a tile ahead
    const uint32_t t = threadIdx.x, lane = t % 32, warp = t / 32;
    if (t < kRingSlots) {
        barrier_init(&filled[t], 64);            // each lane of the preparing warp, and its copies
        barrier_init(&emptied[t], kPixelWarps);  // a lane of each pixel warp
    }
    __syncthreads();
    await_previous_kernel();
    const uint32_t busy_tiles = l.busy_counts[l.turn];
    if (blockIdx.x == 0 && t == 0) l.busy_counts[(l.turn + 2) % 3] = 0u;  // the last draw's, next used two draws on
    const uint32_t count = busy_tiles > blockIdx.x ? (busy_tiles - blockIdx.x + gridDim.x - 1) / gridDim.x : 0u;
    if (!count) return;
    BlockTiles tiles{l.busy, lane, count};
    if (warp == kPixelWarps) {
        Preparer preparing{l, lists, tiles, tiles_x, lane};
        preparing.start();
        for (uint32_t j = 0; j < count; ++j) {
            const uint32_t slot = j % kRingSlots, round = j / kRingSlots;
            if (round > 0) barrier_wait_sleeping(&emptied[slot], (round - 1) % 2);
            preparing.prepare(j, slots[slot], &filled[slot]);
        }
        return;
    }
    // This thread's texel of the tile after the one it shades, fetched into shared memory
    // meanwhile (cp.async: held in a register, it was spilled at once, and the spill's
    // store waited for the load).
    const uint32_t px = pixel_x(t), py = pixel_y(t);
    const auto fetch_texel = [&](uint32_t j) {
        if (j < count) {
            const TileAt of = tile_at(tiles.tile(j), tiles_x);
            const uint32_t x = of.x * TVLM_OVERLAY_TILE + px, y = of.y * TVLM_OVERLAY_TILE + py;
            if (x < l.width && y < l.height)
                copy_async<sizeof(FrameTexel<kHalf>)>(
                    &texels[j % 2][t],
                    static_cast<const char*>(l.frame) + size_t(y) * l.pitch + size_t(x) * sizeof(FrameTexel<kHalf>));
        }
        copy_async_commit();
    };
    fetch_texel(0);
    for (uint32_t j = 0; j < count; ++j) {
        const uint32_t slot = j % kRingSlots;
        copy_async_wait<0>();
        const FrameTexel<kHalf> mine = texels[j % 2][t];
        fetch_texel(j + 1);
        barrier_wait(&filled[slot], j / kRingSlots % 2);
        shade_tile<kHalf>(l, tiles_x, t, mine, slots[slot], walked, walk_counts);
        __syncwarp();
        if (lane == 0) barrier_arrive(&emptied[slot]);
    }
#endif
}

// Blocks of `threads` threads of `kernel` that fit the GPU at once (asked of the runtime
// once per device, kernel and size, not on every draw: a draw's host time is part of a
// video frame's).
template <auto kKernel, uint32_t kThreads>
uint32_t resident_blocks() {
    return resident_wave_blocks(reinterpret_cast<const void*>(kKernel), int(kThreads));
}

}  // namespace

// Both passes are launched early (early_launch.cuh): the binning's launch overlaps the kernel
// before it, the shading's the binning. The binning takes 256 threads a shape where the
// scene's blocks still fit the GPU at once, else 128 (with 256, a scene of many shapes
// ran two rounds of blocks and was slower).
void launch_overlay(const OverlayLaunch& l, cudaStream_t stream) {
    if (const int major = current_device_compute_major(); major * 100 < TVLM_OVERLAY_MIN_ARCH)
        throw Error("the CUDA overlay needs an NVIDIA GPU of compute capability 9.0 (Hopper) or later, not " +
                    std::to_string(major) + ".x: draw with the Vulkan or CPU overlay (backend='vulkan' or 'cpu')");
    const uint32_t tiles_x = (l.width + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE;
    const uint32_t tiles = tiles_x * ((l.height + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE);
    if (!l.shape_count) return;
    const uint32_t bin_threads = l.shape_count <= resident_blocks<bin_kernel, 256>() ? 256 : 128;
    launch_kernel_early(bin_kernel, dim3(l.shape_count), dim3(bin_threads), stream, true, l, tiles_x);
    const dim3 block(kShadeThreads);
    const uint32_t bound = std::max(1u, std::min(l.busy_bound, tiles));
    if (l.half)
        launch_kernel_early(shade_kernel<true>,
                            dim3(std::min(bound, resident_blocks<shade_kernel<true>, kShadeThreads>())), block, stream,
                            true, l, tiles_x);
    else
        launch_kernel_early(shade_kernel<false>,
                            dim3(std::min(bound, resident_blocks<shade_kernel<false>, kShadeThreads>())), block, stream,
                            true, l, tiles_x);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tvlm
