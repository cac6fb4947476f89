// CUDA twin of shaders/box_mips.comp: a block computes a 32x32 tile of level a+1 from
// level a (any ratio), keeps the stored values in shared memory and halves them down the
// 2:1 levels the host chained. Arithmetic per engine/mips/box_filter.h; the comments in the
// shader explain each step.
#include "cuda/mips/box_mips.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

#include "cuda/cuda_check.h"
#include "cuda/cuda_devices.h"
#include "cuda/early_launch.cuh"
#include "cuda/min_blocks.cuh"
#include "cuda/mips/box_arithmetic.cuh"
#include "cuda/surface_texels.cuh"
#include "shaders/srgb8_buckets.h"
#include "shaders/srgb8_tables.h"

namespace tvlm {

namespace {

using namespace box;

__constant__ uint32_t kSrgbTables[511] = {TVLM_SRGB8_LINEAR_VALUES, TVLM_SRGB8_THRESHOLD_VALUES};
constexpr uint32_t kTile = TVLM_BOX_TILE;
static_assert(TVLM_BOX_TILE == 32 && TVLM_BOX_THREADS == 256 && TVLM_BOX_MAX_LEVELS == 6,
              "halve_tile maps 256 threads to a 16x16 grid of 2x2 texels of a 32x32 tile, six levels");

// UNORM8 sums in float where it holds them exactly (TVLM_BOX_FLOAT_EXACT_WEIGHTS). Then
// floor((2n + d) / 2d), the reference's half-up rounding, is a float estimate and one exact
// step either way. The tails of video's odd chains (1080 = 135 x 8) are bound by the
// latency of each texel's instructions, and double arithmetic (conversions, a division)
// was most of them.
constexpr uint32_t kFloatExactWeights = TVLM_BOX_FLOAT_EXACT_WEIGHTS;
__device__ inline float bytes_half_up(float n, float d) {
    const float twice = 2.0f * n + d, step = 2.0f * d;
    float q = floorf(__fdividef(twice, step));
    if ((q + 1.0f) * step <= twice) q += 1.0f;
    else if (q * step > twice) q -= 1.0f;
    return q;
}
// Whether a level of src_w x src_h (both above 1) has weights summing to at most
// kFloatExactWeights: an axis's weights sum to 2 (even sizes) or to its size (odd).
__host__ __device__ inline bool float_sums_exact(uint32_t src_w, uint32_t src_h) {
    const uint32_t sum_x = src_w % 2 == 0 ? 2 : src_w, sum_y = src_h % 2 == 0 ? 2 : src_h;
    return sum_x <= kFloatExactWeights && sum_y <= kFloatExactWeights && sum_x * sum_y <= kFloatExactWeights;
}
// Whether a level of src_w x src_h takes the fixed-tap form (box_texel_fixed_taps): both
// sides above 1, and for 8-bit texels (`bytes`) only UNORM8 whose sums float holds
// exactly; the general form otherwise (sRGB, huge odd levels, size-1 axes). Decided on the
// device per level (box_texel_any_ratio) and on the host per launch (box_level_kernel).
__host__ __device__ inline bool takes_fixed_taps(bool bytes, uint32_t kind, uint32_t src_w, uint32_t src_h) {
    return src_w > 1 && src_h > 1 && (!bytes || (kind == TVLM_BOX_UNORM8 && float_sums_exact(src_w, src_h)));
}

// Texel (x, y) of the next level from a source of src_w x src_h stored values read by
// at(sx, sy), any ratio: the taps' weighted sums in double, rows first, like the reference.
// The general form: tap counts known at run time, taps read one after another.
template <class At>
__device__ float4 box_texel_any_taps(const Filter& filter, uint32_t src_w, uint32_t src_h, uint32_t x, uint32_t y,
                                     At at) {
    const Taps tx = taps(x, src_w), ty = taps(y, src_h);
    double n[4] = {0, 0, 0, 0};
    for (uint32_t b = 0; b < ty.count; ++b) {
        double row[4] = {0, 0, 0, 0};
        for (uint32_t a = 0; a < tx.count; ++a) {
            const float4 v = at(tx.first + a, ty.first + b);
            for (uint32_t c = 0; c < 4; ++c)
                row[c] += static_cast<double>(tx.weight[a]) * filter.averaged(component(v, c), c);
        }
        for (uint32_t c = 0; c < 4; ++c) n[c] += static_cast<double>(ty.weight[b]) * row[c];
    }
    const double d = static_cast<double>(tx.sum) * ty.sum;
    float4 out;
    for (uint32_t c = 0; c < 4; ++c) set_component(out, c, filter.stored_value(n[c], d, c));
    return out;
}

// The same with the level's tap counts (2 or 3 per axis: even or odd sizes, the same for
// every texel) as template arguments: the loops unroll, every tap is read before the
// arithmetic, and the weights stay in registers (with run-time counts they sat in local
// memory). kUnorm8: the caller saw that float holds the sums exactly (float_sums_exact).
template <bool kUnorm8, uint32_t kTapsX, uint32_t kTapsY, class At>
__device__ float4 box_texel_fixed_taps(const Filter& filter, uint32_t src_w, uint32_t src_h, uint32_t x, uint32_t y,
                                       At at) {
    const Taps tx = taps(x, src_w), ty = taps(y, src_h);
    float4 v[kTapsY][kTapsX];
#pragma unroll
    for (uint32_t b = 0; b < kTapsY; ++b)
#pragma unroll
        for (uint32_t a = 0; a < kTapsX; ++a) v[b][a] = at(tx.first + a, ty.first + b);
    // Sums in float (exact, above) or in double, rows first like the reference.
    using Sum = std::conditional_t<kUnorm8, float, double>;
    Sum n[4] = {0, 0, 0, 0};
#pragma unroll
    for (uint32_t b = 0; b < kTapsY; ++b) {
        Sum row[4] = {0, 0, 0, 0};
#pragma unroll
        for (uint32_t a = 0; a < kTapsX; ++a)
#pragma unroll
            for (uint32_t c = 0; c < 4; ++c) {
                // Not a ?: of float and double, which would make the float path's products double.
                const float stored = component(v[b][a], c);
                Sum value;
                if constexpr (kUnorm8) value = stored;
                else value = filter.averaged(stored, c);
                row[c] += static_cast<Sum>(tx.weight[a]) * value;
            }
#pragma unroll
        for (uint32_t c = 0; c < 4; ++c) n[c] += static_cast<Sum>(ty.weight[b]) * row[c];
    }
    float4 out;
#pragma unroll
    for (uint32_t c = 0; c < 4; ++c) {
        if constexpr (kUnorm8) set_component(out, c, bytes_half_up(n[c], static_cast<float>(tx.sum * ty.sum)));
        else set_component(out, c, filter.stored_value(n[c], static_cast<double>(tx.sum) * ty.sum, c));
    }
    return out;
}

// Any ratio, choosing the form per level (uniform over a launch's texels). 8-bit texels
// (kBytes) take the fixed taps only where UNORM8 sums in float exactly, and the general
// form otherwise (sRGB, huge odd levels); the other formats take the fixed taps in double.
// Each choice is one more copy of the arithmetic in the kernel: the tail kernel with every
// combination for both arithmetics measured 16% of its time stalled on instruction fetch.
template <bool kBytes, class At>
__device__ float4 box_texel_any_ratio(const Filter& filter, uint32_t src_w, uint32_t src_h, uint32_t x, uint32_t y,
                                      At at) {
    if (!takes_fixed_taps(kBytes, filter.kind, src_w, src_h)) return box_texel_any_taps(filter, src_w, src_h, x, y, at);
    constexpr bool kUnorm8 = kBytes;
    if (src_w % 2 == 0)
        return src_h % 2 == 0 ? box_texel_fixed_taps<kUnorm8, 2, 2>(filter, src_w, src_h, x, y, at)
                              : box_texel_fixed_taps<kUnorm8, 2, 3>(filter, src_w, src_h, x, y, at);
    return src_h % 2 == 0 ? box_texel_fixed_taps<kUnorm8, 3, 2>(filter, src_w, src_h, x, y, at)
                          : box_texel_fixed_taps<kUnorm8, 3, 3>(filter, src_w, src_h, x, y, at);
}

// The same where the source halves exactly on both axes (kHalving): the 2:1 fast path.
// T: the texels' storage (8-bit texels may take exact float sums).
template <SurfaceTexel T, bool kHalving, class At>
__device__ float4 box_texel(const Filter& filter, uint32_t src_w, uint32_t src_h, uint32_t x, uint32_t y, At at) {
    if constexpr (kHalving)
        return filter.halve(at(2 * x, 2 * y), at(2 * x + 1, 2 * y), at(2 * x, 2 * y + 1), at(2 * x + 1, 2 * y + 1));
    else return box_texel_any_ratio<T == SurfaceTexel::uchar4>(filter, src_w, src_h, x, y, at);
}

template <SurfaceTexel T, bool kHalving>
__device__ float4 first_level_texel(const BoxMipsLaunch& l, const Filter& filter, uint32_t x, uint32_t y,
                                    uint32_t layer) {
    return box_texel<T, kHalving>(filter, l.params.src_width, l.params.src_height, x, y,
                                  [&](uint32_t sx, uint32_t sy) { return load<T>(l.src, sx, sy, layer, l.layered); });
}

// The surface of level a+step among `dst` (levels a+1 ..): a switch, because indexing the
// parameter array with a run-time value copies the whole parameter block to local memory.
__device__ cudaSurfaceObject_t level_surface(const cudaSurfaceObject_t (&dst)[TVLM_BOX_MAX_LEVELS], uint32_t step) {
    switch (step) {
        case 2: return dst[1];
        case 3: return dst[2];
        case 4: return dst[3];
        case 5: return dst[4];
        case 6: return dst[5];
        default: return dst[0];
    }
}

// One destination texel per thread and level from its taps (kHalving: level a halves
// exactly; else any ratio), stored as soon as computed: the simple form, kept for odd
// ratios and as the benchmark's per-texel comparison.
// Whether this block's tile of level 1 depends on no changed tile of level 0 (a launch
// driven by changed tiles): its source is level-0 texels [64 x, 64 x + 65) (2:1 and the
// three taps of odd sizes), rows alike. Uniform over the block.
__device__ bool unchanged_block(const BoxMipsLaunch& l, uint32_t tile_x, uint32_t tile_y) {
    if (!l.changed_tiles) return false;
    constexpr uint32_t kSpan = 2 * TVLM_BOX_TILE;
    const uint32_t x0 = tile_x * kSpan / TVLM_CHANGE_TILE, y0 = tile_y * kSpan / TVLM_CHANGE_TILE;
    const uint32_t x1 = min((tile_x * kSpan + kSpan) / TVLM_CHANGE_TILE, l.changed_tiles_x - 1);
    const uint32_t y1 = min((tile_y * kSpan + kSpan) / TVLM_CHANGE_TILE, l.changed_tiles_y - 1);
    for (uint32_t y = y0; y <= y1; ++y)
        for (uint32_t x = x0; x <= x1; ++x)
            if (l.changed_tiles[y * l.changed_tiles_x + x]) return false;
    return true;
}

template <SurfaceTexel T, bool kHalving>
__global__ void __launch_bounds__(TVLM_BOX_THREADS) box_mips_kernel(BoxMipsLaunch l) {
    __shared__ Tables tables;
    __shared__ float4 tile_a[kTile * kTile];
    __shared__ float4 tile_b[kTile * kTile / 4];
    const uint32_t t = threadIdx.x;
    await_previous_kernel();
    if (unchanged_block(l, blockIdx.x + l.params.tile_x, blockIdx.y + l.params.tile_y)) return;
    if (l.params.kind == TVLM_BOX_SRGB8) {
        tables.linear[t] = kSrgbTables[t];
        if (t < 255) tables.threshold[t] = kSrgbTables[256 + t];
    }
    __syncthreads();
    const Filter filter{l.params.kind, &tables};
    const uint32_t layer = blockIdx.z + l.params.first_layer;
    const uint32_t tile_x = blockIdx.x + l.params.tile_x, tile_y = blockIdx.y + l.params.tile_y;
    const uint32_t width = max(1u, l.params.src_width >> 1), height = max(1u, l.params.src_height >> 1);
    const auto store_level = [&](uint32_t step, uint32_t x, uint32_t y, float4 v) {
        store<T>(level_surface(l.dst, step), x, y, layer, l.layered, v);
    };
    first_tile(
        tile_a, tile_x, tile_y, width, height,
        [&](uint32_t x, uint32_t y) { return first_level_texel<T, kHalving>(l, filter, x, y, layer); }, store_level);
    halve_tile_levels(filter, tile_a, tile_b, l.params.levels, tile_x, tile_y, width, height, store_level);
}

// Levels that halve, for the formats video and images arrive in, with texels kept packed
// in words (no per-channel conversions, 16-byte surface reads and writes):
//  - RGBA8: all four channels average at once, bytes 0 and 2 (then 1 and 3) summed in two
//    16-bit lanes (four bytes sum to at most 1020), rounded half up as (sum + 2) >> 2;
//  - sRGB8: below (Srgb8Words);
//  - RGBA16F: each channel summed in double and rounded to float, then to binary16 (nearest
//    even), the arithmetic of the per-texel kernel and of Vulkan.
// All are the exact box of engine/mips/box_filter.h.
struct Rgba8Words {
    using Word = uint32_t;
    static constexpr bool kRowPairStores = true;  // halve_tile's level a+1 in whole sectors
    static constexpr uint32_t kParts = 1;         // lane_average: a word's arithmetic is a few instructions
    __device__ static void prepare() {}
    __device__ static Word average4(Word a, Word b, Word c, Word d) {
        constexpr uint32_t m = 0x00ff00ffu;
        const uint32_t even = (a & m) + (b & m) + (c & m) + (d & m);
        const uint32_t odd = ((a >> 8) & m) + ((b >> 8) & m) + ((c >> 8) & m) + ((d >> 8) & m);
        return (((even + 0x00020002u) >> 2) & m) | ((((odd + 0x00020002u) >> 2) & m) << 8);
    }
};
// sRGB8: colour channels averaged in 24-bit linear light (tables of srgb8_tables.h) and
// encoded back exactly, #{k : average >= THRESHOLD[k]}, with one table read instead of a
// pow and a search: the carry word of the bucket the sum falls in gives the thresholds
// below the bucket and, as a carry, the one threshold a bucket can hold
// (shaders/srgb8_buckets.h). Alpha averages as bytes. Tables live in shared memory, filled
// by prepare().
// The tables (srgb8_buckets.h Srgb8TableWords): their linear values and carry words,
// copied into shared memory 16 bytes at a time. Copied a word at a time (4 x each threshold
// worked out on the way) the fill was a large share of the kernel's instructions.
__device__ const Srgb8TableWords kSrgbTableWords = make_srgb8_table_words();
__shared__ Srgb8PackedTables srgb_shared;

struct Srgb8Words {
    using Word = uint32_t;
    // Bound by instruction issue (its table reads), where the row exchange costs more
    // than half-sector stores do (docs/benchmarks.md, dropped experiments).
    static constexpr bool kRowPairStores = false;
    static constexpr uint32_t kParts = 4;  // lane_average: red, green, blue, alpha
    __device__ static void prepare() {
        constexpr uint32_t kChunks = sizeof(Srgb8PackedTables) / 16;
        const uint4* from = reinterpret_cast<const uint4*>(&kSrgbTableWords.packed);
        uint4* to = reinterpret_cast<uint4*>(&srgb_shared);
        static_assert(kChunks >= TVLM_BOX_THREADS && kChunks <= 2 * TVLM_BOX_THREADS, "one or two chunks a thread");
        const uint32_t t = threadIdx.x;
        to[t] = __ldg(from + t);
        if (t + TVLM_BOX_THREADS < kChunks) to[t + TVLM_BOX_THREADS] = __ldg(from + t + TVLM_BOX_THREADS);
        __syncthreads();
    }
    // The encoded byte of a channel of the average, in bits 24..31 (the other bits are not 0).
    __device__ static uint32_t channel_high(Word a, Word b, Word c, Word d, uint32_t shift) {
        // The table's byte offset, 4 x the channel's byte, as one dot product of w's bytes
        // with (4 << shift) (IDP, on the FMA pipe), where a shift and a mask took two ALU
        // instructions.
        const auto linear4 = [&](Word w) {
            return *reinterpret_cast<const uint32_t*>(reinterpret_cast<const unsigned char*>(srgb_shared.linear4) +
                                                      __dp4a(w, 4u << shift, 0u));
        };
        const uint32_t m = linear4(a) + linear4(b) + linear4(c) + linear4(d);  // 16 x the average, at most 2^28
        // The bucket's byte offset, 4 x srgb8_carry_bucket(m): 4 (m >> 16) as a dot product
        // of m's halves with bytes (0, 4); the add and the min are one VIADDMNMX.
        const uint32_t offset = min(__dp2a_hi(m, 4u << 24, 0u), ((m >> 19) << 2) + 4 * kSrgb8CarryCoarse);
        return *reinterpret_cast<const uint32_t*>(reinterpret_cast<const unsigned char*>(srgb_shared.carry) + offset) +
               m;
    }
    __device__ static uint32_t channel(Word a, Word b, Word c, Word d, uint32_t shift) {
        return (channel_high(a, b, c, d, shift) >> 24) << shift;
    }
    __device__ static uint32_t alpha(Word a, Word b, Word c, Word d) {
        return (((a >> 24) + (b >> 24) + (c >> 24) + (d >> 24) + 2) >> 2) << 24;
    }
    __device__ static Word average4(Word a, Word b, Word c, Word d) {
        // Each byte from the top of its word, in byte permutes (PRMT): bytes (red, green),
        // then (red, green, blue), then alpha's (its word's top byte) on top.
        const uint32_t red_green = __byte_perm(channel_high(a, b, c, d, 0), channel_high(a, b, c, d, 8), 0x0073);
        const uint32_t colour = __byte_perm(red_green, channel_high(a, b, c, d, 16), 0x0710);
        return __byte_perm(colour, alpha(a, b, c, d), 0x7210);
    }
    // Channel `part` of the average (3: alpha), the other bits 0.
    __device__ static Word average4_part(Word a, Word b, Word c, Word d, uint32_t part) {
        const uint32_t colour = channel(a, b, c, d, 8 * min(part, 2u));  // one table walk, not a branch
        return part == 3 ? alpha(a, b, c, d) : colour;
    }
};

struct Rgba16fWords {
    using Word = uint2;  // four binary16 channels
    static constexpr bool kRowPairStores = true;
    static constexpr uint32_t kParts = 2;  // lane_average: channels 0-1, then 2-3
    __device__ static void prepare() {}
    __device__ static double channel(uint32_t w, uint32_t upper) {
        return __half2float(__ushort_as_half(static_cast<unsigned short>(upper ? w >> 16 : w & 0xffff)));
    }
    __device__ static uint32_t pair(Word a, Word b, Word c, Word d, bool high_word) {
        uint32_t out = 0;
        for (uint32_t upper = 0; upper < 2; ++upper) {
            const auto pick = [&](Word v) { return channel(high_word ? v.y : v.x, upper); };
            const double n = (pick(a) + pick(b)) + (pick(c) + pick(d));
            out |= uint32_t{half_of(float_average(n, 4.0))} << (16 * upper);
        }
        return out;
    }
    __device__ static Word average4(Word a, Word b, Word c, Word d) {
        return make_uint2(pair(a, b, c, d, false), pair(a, b, c, d, true));
    }
    // Word `part` of the average, the other 0.
    __device__ static Word average4_part(Word a, Word b, Word c, Word d, uint32_t part) {
        const uint32_t word = pair(a, b, c, d, part != 0);
        return part ? make_uint2(0, word) : make_uint2(word, 0);
    }
};

// Four texels x .. x+3 of a row in 16-byte accesses.
template <class Word>
__device__ void read4(cudaSurfaceObject_t s, uint32_t x, uint32_t y, uint32_t layer, bool layered, Word out[4]) {
    uint4* chunks = reinterpret_cast<uint4*>(out);
#pragma unroll
    for (uint32_t c = 0; c < sizeof(Word) * 4 / 16; ++c)
        chunks[c] = read_word<uint4>(s, x * sizeof(Word) + 16 * c, y, layer, layered);
}
// Two neighbouring texels of a row in one 8- or 16-byte write.
__device__ void write2(cudaSurfaceObject_t s, uint32_t a, uint32_t b, uint32_t x, uint32_t y, uint32_t layer,
                       bool layered) {
    write_word(s, make_uint2(a, b), x * 4, y, layer, layered);
}
__device__ void write2(cudaSurfaceObject_t s, uint2 a, uint2 b, uint32_t x, uint32_t y, uint32_t layer, bool layered) {
    write_word(s, make_uint4(a.x, a.y, b.x, b.y), x * 8, y, layer, layered);
}

// Where a tile's source texels come from: a level through its surface (rows past the
// edge clamped; they feed only texels that are not written), or, for a fused tail, the
// words the blocks of this launch left in global memory, read past L1. copy_rows(r, x, y)
// is given each thread's 4x4 block once read (FrameSource writes it into level 0; the
// others have nothing to do), by every thread of the block.
template <class Word>
struct SurfaceSource {
    cudaSurfaceObject_t surface;
    uint32_t width, height, layer;
    bool layered;
    __device__ void row4(uint32_t x, uint32_t y, Word out[4]) const {
        y = min(y, height - 1);
        if (x + 3 < width) {
            read4(surface, x, y, layer, layered, out);
            return;
        }
#pragma unroll
        for (uint32_t k = 0; k < 4; ++k)
            out[k] = read_word<Word>(surface, min(x + k, width - 1) * sizeof(Word), y, layer, layered);
    }
    __device__ void copy_rows(const Word (&)[4][4], uint32_t, uint32_t) const {}
};
template <class Word>
struct ScratchSource {
    const Word* words;
    uint32_t width, height;
    __device__ void row4(uint32_t x, uint32_t y, Word out[4]) const {
        y = min(y, height - 1);
#pragma unroll
        for (uint32_t k = 0; k < 4; ++k) out[k] = __ldcg(&words[y * width + min(x + k, width - 1)]);
    }
    __device__ void copy_rows(const Word (&)[4][4], uint32_t, uint32_t) const {}
};

__device__ uint32_t shuffle_xor(uint32_t v, uint32_t lanes) { return __shfl_xor_sync(0xffffffffu, v, lanes); }
__device__ uint2 shuffle_xor(uint2 v, uint32_t lanes) {
    return make_uint2(shuffle_xor(v.x, lanes), shuffle_xor(v.y, lanes));
}
__device__ uint4 shuffle_xor(uint4 v, uint32_t lanes) {
    return make_uint4(shuffle_xor(v.x, lanes), shuffle_xor(v.y, lanes), shuffle_xor(v.z, lanes),
                      shuffle_xor(v.w, lanes));
}

// Level 0 from a frame in CUDA memory (rows `row_bytes` apart, 16-byte aligned), written
// into level 0's surface as it is read: the copy into the texture and the chain's first
// pass are one launch, and the frame is read once (a kernel copy, then the pass reading
// level 0 back, read it twice and cost a launch).
// Each source texel is read by one thread of one block, so each is written once; rows
// and columns clamped past the edge are read, not written. RGBA8 (Word: 4 bytes, a row of
// four texels one 16-byte chunk) and RGBA16F (8 bytes, two chunks).
template <class Word>
struct FrameSource {
    static constexpr uint32_t kChunks = sizeof(Word) * 4 / 16;  // per row of four texels
    static_assert(kChunks == 1 || kChunks == 2, "RGBA8 or RGBA16F words");
    const unsigned char* rows;  // this layer's row 0
    size_t row_bytes;
    cudaSurfaceObject_t level0;
    uint32_t width, height, layer;
    bool layered;
    __device__ void row4(uint32_t x, uint32_t y, Word out[4]) const {
        y = min(y, height - 1);
        const Word* row = reinterpret_cast<const Word*>(rows + y * row_bytes);
        if (x + 3 < width) {
#pragma unroll
            for (uint32_t c = 0; c < kChunks; ++c)  // read once: streamed
                reinterpret_cast<uint4*>(out)[c] = __ldcs(reinterpret_cast<const uint4*>(row + x) + c);
            return;
        }
#pragma unroll
        for (uint32_t k = 0; k < 4; ++k) out[k] = row[min(x + k, width - 1)];
    }
    // Writes into a CUDA array cost one L2 transaction per 32-byte sector an instruction
    // touches, and a sector of its block-linear layout is 16 bytes of two neighbouring rows.
    // A warp's lanes hold 4x4 blocks of 8 columns x 16 rows (halve_tile's Morton order), so
    // written as held, each store wrote rows 4 apart, half a sector per lane: less than half
    // the rate of a warp writing 8 chunks x 4 neighbouring rows. So
    // the four lanes that share a column (lane bits 1 and 3) transpose their rows first,
    // and store s writes rows 4s .. 4s+3 of the warp's 16.
    __device__ void copy_rows(const Word (&r)[4][4], uint32_t x, uint32_t y) const {
        const uint32_t lane = threadIdx.x & 31, q = ((lane >> 1) & 1) | ((lane >> 2) & 2);  // this block's place, 0..3
        const auto chunk = [&](uint32_t k, uint32_t c) { return reinterpret_cast<const uint4*>(r[k])[c]; };
        uint4 held[4][kChunks];  // held[s]: row q of the block of lane s, row 4s + q of the warp's rows
#pragma unroll
        for (uint32_t i = 0; i < 4; ++i) {
            // Round i: every lane sends its row q ^ i to the lane whose place is q ^ i.
            const uint32_t k = q ^ i;
#pragma unroll
            for (uint32_t c = 0; c < kChunks; ++c) {
                const uint4 send = k == 0 ? chunk(0, c) : k == 1 ? chunk(1, c) : k == 2 ? chunk(2, c) : chunk(3, c);
                const uint4 got = i == 0 ? send : shuffle_xor(send, ((i & 1) << 1) | ((i & 2) << 2));
#pragma unroll
                for (uint32_t s = 0; s < 4; ++s)
                    if (s == k) held[s][c] = got;
            }
        }
        const uint32_t top = y - 4 * q;  // the warp's first row
#pragma unroll
        for (uint32_t s = 0; s < 4; ++s) {
            const uint32_t row = top + 4 * s + q;
            if (row >= height) continue;
            if (x + 3 < width) {
#pragma unroll
                for (uint32_t c = 0; c < kChunks; ++c)
                    write_word(level0, held[s][c], x * sizeof(Word) + 16 * c, row, layer, layered);
                continue;
            }
            const Word* texels = reinterpret_cast<const Word*>(held[s]);
#pragma unroll
            for (uint32_t k = 0; k < 4; ++k)
                if (x + k < width) write_word(level0, texels[k], (x + k) * sizeof(Word), row, layer, layered);
        }
    }
};

__device__ uint2 operator|(uint2 a, uint2 b) { return make_uint2(a.x | b.x, a.y | b.y); }

// The average of the words of lanes l, l^s, l^2s, l^3s (s = 1: a lane quad; s = 4: four
// quads), in all four. Where a word's arithmetic is long (Words::kParts > 1), each of the
// four lanes works out one part of it (a channel of sRGB8, a word of RGBA16F) and the parts
// are or-ed together across the lanes: the same four lanes had each done the whole.
template <class Words>
__device__ typename Words::Word lane_average(typename Words::Word v, uint32_t s) {
    using Word = typename Words::Word;
    const Word b = shuffle_xor(v, s), c = shuffle_xor(v, 2 * s), d = shuffle_xor(v, 3 * s);
    if constexpr (Words::kParts == 1) {
        return Words::average4(v, b, c, d);
    } else {
        const uint32_t place = (threadIdx.x / s) & 3;  // this lane among the four
        Word part = Words::average4_part(v, b, c, d, place % Words::kParts);
        part = part | shuffle_xor(part, s);  // parts (place, place ^ 1)
        if constexpr (Words::kParts == 4) part = part | shuffle_xor(part, 2 * s);
        return part;
    }
}

// Bits 0, 2, 4, 6 of v, packed: the x of a Morton index (the y is even_bits(v >> 1)).
__device__ uint32_t even_bits(uint32_t v) {
    v &= 0x55u;
    v = (v | (v >> 1)) & 0x33u;
    return (v | (v >> 2)) & 0x0fu;
}

// Where a block writes levels a+1 .. a+levels: level a+1 is width x height and every level
// after it halves exactly (the host chains only such levels).
struct TileTarget {
    cudaSurfaceObject_t dst[TVLM_BOX_MAX_LEVELS];
    uint32_t levels, width, height, tile_x, tile_y, layer;
    bool layered;

    __device__ cudaSurfaceObject_t surface(uint32_t step) const { return level_surface(dst, step); }
    // Texel (x, y) of the block's part of level a+step, at tile scale 32 >> (step - 1).
    template <class Word>
    __device__ void store(uint32_t step, Word v, uint32_t x, uint32_t y) const {
        const uint32_t edge = TVLM_BOX_TILE >> (step - 1);
        x += tile_x * edge;
        y += tile_y * edge;
        if (step <= levels && x < width >> (step - 1) && y < height >> (step - 1))
            write_word(surface(step), v, x * sizeof(Word), y, layer, layered);
    }
    // Thread 0's first store into each of the block's levels, done early with any value (0):
    // thread 0 stores that texel again when the block has halved its tile. The first
    // surface stores of a one-block pass into its levels hold up its store issue for a
    // large share of such a short pass (warming with loads does nothing). An early-launched pass stores these while it waits for the
    // pass before it (which reads and writes other levels); its later stores issue at once.
    template <class Word>
    __device__ void store_first_texels_early() const {
#pragma unroll
        for (uint32_t step = 1; step <= TVLM_BOX_MAX_LEVELS; ++step) store(step, Word{}, 0, 0);
    }
};

// One block halves a 64x64 tile of level a down to 1x1 (level a+6). Thread t owns the 4x4
// source texels at Morton position (even_bits(t), even_bits(t >> 1)) of a 16x16 grid: it
// averages 2x2 texels of level a+1 and one of a+2 in registers; then the four lanes of a
// quad hold a 2x2 block of a+2 and sixteen lanes a 4x4 block, so a+3 and a+4 are averaged
// with warp shuffles and only the block's 16 texels of a+4 pass through shared memory, to
// warp 0, for a+5 and a+6. One barrier where halving in shared memory took five.
// Returns a+6 (in thread 0).
template <class Words, class Source>
__device__ typename Words::Word halve_tile(const Source& src, const TileTarget& to, typename Words::Word* level4) {
    using Word = typename Words::Word;
    const uint32_t t = threadIdx.x, qx = even_bits(t), qy = even_bits(t >> 1);
    Word r[4][4];
#pragma unroll
    for (uint32_t k = 0; k < 4; ++k)
        src.row4(to.tile_x * 2 * TVLM_BOX_TILE + 4 * qx, to.tile_y * 2 * TVLM_BOX_TILE + 4 * qy + k, r[k]);
    src.copy_rows(r, to.tile_x * 2 * TVLM_BOX_TILE + 4 * qx, to.tile_y * 2 * TVLM_BOX_TILE + 4 * qy);
    Word l1[2][2];
#pragma unroll
    for (uint32_t i = 0; i < 2; ++i)
#pragma unroll
        for (uint32_t j = 0; j < 2; ++j)
            l1[i][j] = Words::average4(r[2 * i][2 * j], r[2 * i][2 * j + 1], r[2 * i + 1][2 * j],
                                       r[2 * i + 1][2 * j + 1]);
    const Word l2 = Words::average4(l1[0][0], l1[0][1], l1[1][0], l1[1][1]);
    const Word l3 = lane_average<Words>(l2, 1);
    const Word l4 = lane_average<Words>(l3, 4);
    if ((t & 15) == 0) level4[t >> 4] = l4;
    __syncthreads();

    // Level a+1. A lane holds rows 2qy and 2qy+1 of it; stored as held, each store writes
    // every other row of the warp's, half of each sector (FrameSource::copy_rows). So the
    // two lanes of a pair in y (lane bit 1, b = qy & 1) swap a row first, and store k
    // writes row 2k + b of the pair's four: neighbouring rows in neighbouring lanes.
    constexpr bool kPairs = Words::kRowPairStores;
    const uint32_t b = kPairs ? qy & 1 : 0, x1 = to.tile_x * TVLM_BOX_TILE + 2 * qx;
    Word got0{}, got1{};
    if constexpr (kPairs) {
        got0 = shuffle_xor(b ? l1[0][0] : l1[1][0], 2);
        got1 = shuffle_xor(b ? l1[0][1] : l1[1][1], 2);
    }
#pragma unroll
    for (uint32_t k = 0; k < 2; ++k) {
        const uint32_t row = to.tile_y * TVLM_BOX_TILE + 2 * qy + (kPairs ? 2 * k - b : k);
        if (row >= to.height) continue;
        const bool other = kPairs && k != b;  // else this lane's own row k
        const Word w0 = other ? got0 : l1[k][0], w1 = other ? got1 : l1[k][1];
        if (x1 + 1 < to.width) write2(to.surface(1), w0, w1, x1, row, to.layer, to.layered);
        else if (x1 < to.width) write_word(to.surface(1), w0, x1 * sizeof(Word), row, to.layer, to.layered);
    }
    to.store(2, l2, qx, qy);
    if ((t & 3) == 0) to.store(3, l3, qx / 2, qy / 2);
    if ((t & 15) == 0) to.store(4, l4, qx / 4, qy / 4);
    Word l6{};
    if (t < 32) {  // warp 0: lanes 0..15 (and again 16..31) hold the block's 4x4 texels of a+4
        const Word l5 = lane_average<Words>(level4[t & 15], 1);
        l6 = lane_average<Words>(l5, 4);
        if (t < 16 && (t & 3) == 0) to.store(5, l5, qx / 2, qy / 2);
        if (t == 0) to.store(6, l6, 0, 0);
    }
    return l6;
}

// The tail's ticket: an atomic increment that wraps to 0 after `last`, releasing this
// thread's earlier writes (its block's word) and acquiring those of the blocks before it, at
// GPU scope. It replaces __threadfence() + atomicInc() in every block and a second
// __threadfence() in every thread of the last one: fences that wait for all of a thread's
// outstanding memory operations, on the path of the last block to finish.
__device__ uint32_t take_ticket(uint32_t* counter, uint32_t last) {
    uint32_t old;
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(last) : "memory");
    return old;
}
// A deferred tail's count: one more block done, releasing this thread's earlier writes (its
// block's word). A reduction: nothing comes back, so the block does not wait for it.
__device__ void count_in(uint32_t* counter) {
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
}
__device__ uint32_t acquire_count(const uint32_t* counter) {
    uint32_t count;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(count) : "l"(counter) : "memory");
    return count;
}

// This block's part of the launch's levels (packed_tile writes the same out again: built by
// this call there, ptxas allocated the RGBA16F and frame kernels' registers differently).
__device__ TileTarget tile_target(const BoxMipsLaunch& l) {
    TileTarget to{{},
                  l.params.levels,
                  l.params.src_width / 2,
                  l.params.src_height / 2,
                  blockIdx.x + l.params.tile_x,
                  blockIdx.y + l.params.tile_y,
                  blockIdx.z + l.params.first_layer,
                  l.layered};
    for (uint32_t k = 0; k < TVLM_BOX_MAX_LEVELS; ++k) to.dst[k] = l.dst[k];
    return to;
}

// A fused tail's halving, in the last block to finish, as a call (packed_tile's kTailCall).
template <class Words>
__device__ __noinline__ void halve_fused_tail(ScratchSource<typename Words::Word> words, TileTarget tail) {
    __shared__ typename Words::Word level4[16];
    halve_tile<Words>(words, tail, level4);
}

// Levels that halve, for the formats video and images arrive in (see halve_tile). A
// launch with a tail also does the pass after it, which is one tile: each block leaves its
// texel of level a+6 in global memory, and the last block of each layer to finish (an
// atomic ticket) halves them all, instead of a second launch waiting for the first (the
// host fuses only where that pays: cuda_pipelines/cuda_box_mips.cpp).
// kFromFrame: level 0 comes from l.frame (FrameSource) and is written on the way.
// kOneTile: box_packed_one_tile_kernel's early start (below).
// kTailCall: the tail's halve_tile is a call (halve_fused_tail), not inlined, so that it
// does not share the register allocation of the halve_tile every block runs (see
// box_packed_srgb8_kernel). The RGBA8 and RGBA16F kernels, with registers to spare, gain
// nothing from it and lose the call's cost in the block that runs the tail.
template <class Words, bool kFromFrame, bool kTailCall = false, bool kOneTile = false>
__device__ __forceinline__ void packed_tile(const BoxMipsLaunch& l) {
    using Word = typename Words::Word;
    __shared__ Word level4[16];
    __shared__ bool last_block;
    if constexpr (kOneTile) {  // box_packed_one_tile_kernel: what needs nothing from the pass before
        if (threadIdx.x == 0) tile_target(l).store_first_texels_early<Word>();
        Words::prepare();
    }
    await_previous_kernel_then_allow_next();
    if (unchanged_block(l, blockIdx.x + l.params.tile_x, blockIdx.y + l.params.tile_y)) return;
    if constexpr (!kOneTile) Words::prepare();
    const uint32_t layer = blockIdx.z + l.params.first_layer;
    TileTarget to{{},
                  l.params.levels,
                  l.params.src_width / 2,
                  l.params.src_height / 2,
                  blockIdx.x + l.params.tile_x,
                  blockIdx.y + l.params.tile_y,
                  layer,
                  l.layered};
    for (uint32_t k = 0; k < TVLM_BOX_MAX_LEVELS; ++k) to.dst[k] = l.dst[k];
    Word last;
    if constexpr (kFromFrame) {
        const unsigned char* rows = static_cast<const unsigned char*>(l.frame) +
                                    layer * l.frame_row_bytes * l.params.src_height;
        last = halve_tile<Words>(FrameSource<Word>{rows, l.frame_row_bytes, l.src, l.params.src_width,
                                                   l.params.src_height, layer, l.layered},
                                 to, level4);
    } else {
        last = halve_tile<Words>(SurfaceSource<Word>{l.src, l.params.src_width, l.params.src_height, layer, l.layered},
                                 to, level4);
    }
    if (l.tail.levels == 0) return;

    const uint32_t blocks = gridDim.x * gridDim.y;
    Word* words = static_cast<Word*>(l.tail.scratch) + blockIdx.z * blocks;
    if (l.tail.deferred) {  // box_packed_deferred_tail_kernel halves the words
        if (threadIdx.x == 0) {
            words[blockIdx.y * gridDim.x + blockIdx.x] = last;
            count_in(&l.tail.counters[blockIdx.z]);
        }
        return;
    }
    if (threadIdx.x == 0) {
        words[blockIdx.y * gridDim.x + blockIdx.x] = last;
        last_block = take_ticket(&l.tail.counters[blockIdx.z], blocks - 1) == blocks - 1;
    }
    __syncthreads();  // the last block's threads read the words after thread 0's acquire
    if (!last_block) return;
    TileTarget tail{{}, l.tail.levels, gridDim.x / 2, gridDim.y / 2, 0, 0, layer, l.layered};
    for (uint32_t k = 0; k < TVLM_BOX_MAX_LEVELS; ++k) tail.dst[k] = l.tail.dst[k];
    const ScratchSource<Word> source{words, gridDim.x, gridDim.y};
    if constexpr (kTailCall) halve_fused_tail<Words>(source, tail);
    else halve_tile<Words>(source, tail, level4);
}

template <class Words, bool kFromFrame>
__global__ void __launch_bounds__(TVLM_BOX_THREADS) box_packed_kernel(BoxMipsLaunch l) {
    packed_tile<Words, kFromFrame>(l);
}

// A pass of one tile a layer launched early, as a chain's last pass is: its blocks start
// while the pass before runs, and wait. Meanwhile they fill their tables and store ahead
// (TileTarget::store_first_texels_early); every texel of their tile they rewrite (no
// changed tiles, no tail: runs_one_tile). A kernel of its own, so that this code leaves
// the register allocation of the kernels of a chain's other passes as it was (in them it
// slowed the fused sRGB8 chains and the small frame graphs).
template <class Words>
__global__ void __launch_bounds__(TVLM_BOX_THREADS) box_packed_one_tile_kernel(BoxMipsLaunch l) {
    packed_tile<Words, false, false, true>(l);
}

// A deferred tail (launch_box_deferred_tail): block z halves layer z's words once all
// l.tiles_x x l.tiles_y blocks of the pass have counted themselves in, and sets the count
// back to 0 for the next chain.
template <class Words>
__global__ void __launch_bounds__(TVLM_BOX_THREADS) box_packed_deferred_tail_kernel(BoxMipsLaunch l) {
    using Word = typename Words::Word;
    __shared__ Word level4[16];
    allow_next_kernel();
    Words::prepare();
    const uint32_t blocks = l.tiles_x * l.tiles_y, layer = blockIdx.z + l.params.first_layer;
    uint32_t* counter = &l.tail.counters[blockIdx.z];
    if (threadIdx.x == 0) {
        while (acquire_count(counter) < blocks) __nanosleep(64);
        *counter = 0;  // the next chain's pass starts after this kernel ends
    }
    __syncthreads();  // the block's threads read the words after thread 0's acquire
    const Word* words = static_cast<const Word*>(l.tail.scratch) + blockIdx.z * blocks;
    TileTarget tail{{}, l.tail.levels, l.tiles_x / 2, l.tiles_y / 2, 0, 0, layer, l.layered};
    for (uint32_t k = 0; k < TVLM_BOX_MAX_LEVELS; ++k) tail.dst[k] = l.tail.dst[k];
    halve_tile<Words>(ScratchSource<Word>{words, l.tiles_x, l.tiles_y}, tail, level4);
    wait_previous_kernel();  // ends after the kernel before it, as stream order promises
}

// RGBA16F frames: left to itself nvcc gave this kernel 82 registers, so 88 were allocated
// a thread and two blocks of 256 threads fit an SM; at 80 (no spills) three fit, which
// brings batches of frames close to their byte floor.
__global__ void __launch_bounds__(TVLM_BOX_THREADS, TVLM_MIN_BLOCKS(TVLM_BOX_THREADS, 3))
    box_packed_rgba16f_frame_kernel(BoxMipsLaunch l) {
    packed_tile<Rgba16fWords, true>(l);
}

// sRGB8: left to itself nvcc gives this kernel 48 registers, five blocks an SM. At 40 (no
// spills) six fit; since its tables are copied in 16-byte chunks, 32 registers (eight
// blocks, a 4-byte spill) are faster still. Its tail is a call: inlined, ptxas put two spill
// stores and three reloads on every block's path; as a call, the spills fall in the branch
// of edge tiles only.
__global__ void __launch_bounds__(TVLM_BOX_THREADS, TVLM_MIN_BLOCKS(TVLM_BOX_THREADS, 8))
    box_packed_srgb8_kernel(BoxMipsLaunch l) {
    packed_tile<Srgb8Words, false, true>(l);
}

// One level of any ratio (a pass of one level whose source does not halve: the odd levels
// of video's chains, 1080 = 135 x 8), one texel per thread, the level's tap counts as
// template arguments (0: the general form; 2 x 2: the 2:1 step). box_mips_kernel gave each
// thread four texels of a 32x32 tile, one after another, on few blocks: the 240x135 ->
// 120x67 pass of a 1080p chain ran on 12 blocks, stalled on surface reads
// and on instruction fetch across its many arithmetic variants. Blocks of 32 x 8 texels
// over the pass's tiles of 32 x 32 (its dirty rectangle too).
constexpr uint32_t kLevelBlockRows = TVLM_BOX_THREADS / TVLM_BOX_TILE;

template <SurfaceTexel T, uint32_t kTapsX, uint32_t kTapsY>
__global__ void __launch_bounds__(TVLM_BOX_THREADS) box_level_kernel(BoxMipsLaunch l) {
    __shared__ Tables tables;
    await_previous_kernel();
    if (l.params.kind == TVLM_BOX_SRGB8) {
        const uint32_t t = threadIdx.y * TVLM_BOX_TILE + threadIdx.x;
        tables.linear[t] = kSrgbTables[t];
        if (t < 255) tables.threshold[t] = kSrgbTables[256 + t];
        __syncthreads();
    }
    const Filter filter{l.params.kind, &tables};
    const uint32_t src_w = l.params.src_width, src_h = l.params.src_height;
    const uint32_t width = max(1u, src_w >> 1), height = max(1u, src_h >> 1);
    const uint32_t x = (l.params.tile_x + blockIdx.x) * TVLM_BOX_TILE + threadIdx.x;
    const uint32_t y = l.params.tile_y * TVLM_BOX_TILE + blockIdx.y * kLevelBlockRows + threadIdx.y;
    if (x >= width || y >= height) return;
    const uint32_t layer = blockIdx.z + l.params.first_layer;
    const auto at = [&](uint32_t sx, uint32_t sy) { return load<T>(l.src, sx, sy, layer, l.layered); };
    float4 v;
    if constexpr (kTapsX == 0) v = box_texel_any_taps(filter, src_w, src_h, x, y, at);
    else if constexpr (kTapsX == 2 && kTapsY == 2) v = box_texel<T, true>(filter, src_w, src_h, x, y, at);
    else v = box_texel_fixed_taps<T == SurfaceTexel::uchar4, kTapsX, kTapsY>(filter, src_w, src_h, x, y, at);
    store<T>(l.dst[0], x, y, layer, l.layered, v);
}

template <SurfaceTexel T>
void launch_level(const BoxMipsLaunch& l, dim3 tiles, cudaStream_t stream) {
    const uint32_t w = l.params.src_width, h = l.params.src_height;
    const dim3 grid(tiles.x, tiles.y * (TVLM_BOX_TILE / kLevelBlockRows), tiles.z),
        threads(TVLM_BOX_TILE, kLevelBlockRows);
    const bool fixed = takes_fixed_taps(T == SurfaceTexel::uchar4, l.params.kind, w, h);
    auto* kernel = box_level_kernel<T, 0, 0>;
    if (fixed && w % 2 == 0) kernel = h % 2 == 0 ? box_level_kernel<T, 2, 2> : box_level_kernel<T, 2, 3>;
    else if (fixed) kernel = h % 2 == 0 ? box_level_kernel<T, 3, 2> : box_level_kernel<T, 3, 3>;
    launch_kernel_early(kernel, grid, threads, stream, l.overlap_launch, l);
}

// Whether a launch takes box_level_kernel: packed kernels asked for, a pass of one level
// whose source does not halve (the packed kernel takes those that do), not driven by changed tiles.
bool runs_one_level(const BoxMipsLaunch& l) {
    return l.packed && !runs_packed(l) && l.params.levels == 1 && !l.changed_tiles && l.tail.levels == 0;
}

// `overlap`: launch while the previous kernel on the stream still runs (early_launch.cuh).
// Used for the passes after a chain's first, which gain by it; letting whole chains
// overlap the chain before them made small chains slower (waiting chains pile up).
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, bool overlap, cudaStream_t stream, Args... args) {
    launch_kernel_early(kernel, grid, dim3(TVLM_BOX_THREADS), stream, overlap, args...);
}

// Whether a packed launch takes box_packed_one_tile_kernel: one tile a layer after a pass of
// its chain, its tile rewritten whole, no tail. The kernels that may run beside its early
// stores are its own chain's passes, which write other levels: each pass starts only once
// every block of the pass before started, and the first pass starts early only as a packed
// kernel, whose blocks let the next launch begin only after their wait (packed_tile).
bool runs_one_tile(const BoxMipsLaunch& l) {
    return runs_packed(l) && l.tiles_x == 1 && l.tiles_y == 1 && l.after_pass && !l.changed_tiles && !l.frame &&
           !l.tail.levels;
}

// Whether `kind` (TVLM_BOX_*) has packed kernels: texels of one or two words.
bool has_packed_words(uint32_t kind) {
    return kind == TVLM_BOX_UNORM8 || kind == TVLM_BOX_SRGB8 || kind == TVLM_BOX_FLOAT16;
}

// Calls use(Words{}) with the packed kernels' word type of `kind` (has_packed_words): the
// one place where a format picks its packed kernels.
template <class Use>
void with_packed_words(uint32_t kind, Use&& use) {
    if (kind == TVLM_BOX_UNORM8) use(Rgba8Words{});
    else if (kind == TVLM_BOX_SRGB8) use(Srgb8Words{});
    else use(Rgba16fWords{});
}

// The packed kernel of a pass of Words: sRGB8's has launch bounds and a tail call of its own.
template <class Words>
constexpr auto packed_kernel() {
    if constexpr (std::is_same_v<Words, Srgb8Words>) return box_packed_srgb8_kernel;
    else return box_packed_kernel<Words, false>;
}

template <SurfaceTexel T>
void launch_kernel(const BoxMipsLaunch& l, dim3 grid, cudaStream_t stream) {
    const bool halving = l.params.src_width % 2 == 0 && l.params.src_height % 2 == 0;
    if (l.frame && l.params.kind == TVLM_BOX_FLOAT16)
        launch(box_packed_rgba16f_frame_kernel, grid, l.overlap_launch, stream, l);
    else if (l.frame) launch(box_packed_kernel<Rgba8Words, true>, grid, l.overlap_launch, stream, l);
    else if (runs_packed(l))
        with_packed_words(l.params.kind, [&](auto words) {
            using Words = decltype(words);
            launch(runs_one_tile(l) ? box_packed_one_tile_kernel<Words> : packed_kernel<Words>(), grid,
                   l.overlap_launch, stream, l);
        });
    else if (runs_one_level(l)) launch_level<T>(l, grid, stream);
    else if (halving) launch(box_mips_kernel<T, true>, grid, l.overlap_launch, stream, l);
    else launch(box_mips_kernel<T, false>, grid, l.overlap_launch, stream, l);
}

constexpr uint32_t kTailThreads = 1024;
constexpr size_t kTailSharedBytes = (kBoxTailTexels + kBoxTailTexels / 4) * sizeof(float4);

template <SurfaceTexel T>
__global__ void __launch_bounds__(kTailThreads) box_tail_kernel(BoxTailLaunch l) {
    extern __shared__ float4 tail_levels[];  // level a+1 (kBoxTailTexels), then ping-pong with a quarter of it
    __shared__ Tables tables;
    __shared__ cudaSurfaceObject_t dst[kBoxTailMaxLevels];  // shared: a run-time index of the parameter copies it
    const uint32_t t = threadIdx.x;
    if (t < kBoxTailMaxLevels) dst[t] = l.dst[t];
    if (l.kind == TVLM_BOX_SRGB8 && t < 256) {
        tables.linear[t] = kSrgbTables[t];
        if (t < 255) tables.threshold[t] = kSrgbTables[256 + t];
    }
    __syncthreads();
    const uint32_t layer = blockIdx.x + l.first_layer;
    // Launched early after a pass of its chain: thread 0, which writes texel (0, 0) of every
    // level below, stores it ahead while the block waits (TileTarget::store_first_texels_early).
    if (l.overlap_launch && t == 0)
        for (uint32_t step = 0; step < l.levels; ++step) store<T>(dst[step], 0, 0, layer, l.layered, float4{});
    await_previous_kernel();
    const Filter filter{l.kind, &tables};
    float4* from = tail_levels + kBoxTailTexels;  // unused before level a+2
    float4* to = tail_levels;
    uint32_t src_w = l.src_width, src_h = l.src_height;
    for (uint32_t step = 0; step < l.levels; ++step) {
        const uint32_t w = max(1u, src_w >> 1), h = max(1u, src_h >> 1);
        const bool halving = src_w % 2 == 0 && src_h % 2 == 0;
        for (uint32_t i = t; i < w * h; i += kTailThreads) {
            const uint32_t x = i % w, y = i / w;
            float4 v;
            if (step == 0) {
                const auto at = [&](uint32_t sx, uint32_t sy) { return load<T>(l.src, sx, sy, layer, l.layered); };
                v = halving ? box_texel<T, true>(filter, src_w, src_h, x, y, at)
                            : box_texel<T, false>(filter, src_w, src_h, x, y, at);
            } else {
                const auto at = [&](uint32_t sx, uint32_t sy) { return from[sy * src_w + sx]; };
                v = halving ? box_texel<T, true>(filter, src_w, src_h, x, y, at)
                            : box_texel<T, false>(filter, src_w, src_h, x, y, at);
            }
            store<T>(dst[step], x, y, layer, l.layered, v);
            to[i] = v;
        }
        __syncthreads();
        float4* const written = to;
        to = step == 0 ? tail_levels + kBoxTailTexels : from;
        from = written;
        src_w = w;
        src_h = h;
    }
}

template <SurfaceTexel T>
void launch_tail(const BoxTailLaunch& l, cudaStream_t stream) {
    // More than the default 48 KB of dynamic shared memory: a function attribute of each
    // device (a second GPU refused the launch when it was set once per process).
    allow_dynamic_shared(reinterpret_cast<const void*>(box_tail_kernel<T>), kTailSharedBytes);
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = l.overlap_launch ? 1 : 0;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(l.layers);
    config.blockDim = dim3(kTailThreads);
    config.dynamicSmemBytes = kTailSharedBytes;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    TVLM_CUDA_CHECK(cudaLaunchKernelEx(&config, box_tail_kernel<T>, l));
}

}  // namespace

void launch_box_tail(const BoxTailLaunch& l, cudaStream_t stream) {
    const uint32_t w = std::max(1u, l.src_width >> 1), h = std::max(1u, l.src_height >> 1);
    const size_t second = size_t{std::max(1u, w >> 1)} * std::max(1u, h >> 1);
    if (size_t{w} * h > kBoxTailTexels || (l.levels > 1 && second > kBoxTailTexels / 4) || l.levels == 0 ||
        l.levels > kBoxTailMaxLevels)
        throw std::logic_error(
            "a box tail's first level has at most kBoxTailTexels texels, its second a quarter "
            "of that, and 1..16 levels");
    switch (l.texel) {
        case SurfaceTexel::uchar4: launch_tail<SurfaceTexel::uchar4>(l, stream); break;
        case SurfaceTexel::half4: launch_tail<SurfaceTexel::half4>(l, stream); break;
        case SurfaceTexel::float4: launch_tail<SurfaceTexel::float4>(l, stream); break;
        case SurfaceTexel::float1: launch_tail<SurfaceTexel::float1>(l, stream); break;
    }
    TVLM_CUDA_CHECK(cudaGetLastError());
}

uint32_t packed_blocks_at_once(uint32_t kind) {
    if (!has_packed_words(kind)) return 0;
    uint32_t blocks = 0;
    with_packed_words(kind, [&](auto words) {
        blocks = resident_wave_blocks(reinterpret_cast<const void*>(packed_kernel<decltype(words)>()),
                                      TVLM_BOX_THREADS);
    });
    return blocks;
}

bool runs_packed(const BoxMipsLaunch& l) {
    return l.packed && l.params.src_width % 2 == 0 && l.params.src_height % 2 == 0 && has_packed_words(l.params.kind);
}

void launch_box_mips(const BoxMipsLaunch& launch, cudaStream_t stream) {
    if (launch.tail.levels && !runs_packed(launch)) throw std::logic_error("a box tail needs the packed kernel");
    if (launch.changed_tiles &&
        (launch.tail.levels || launch.layers != 1 || launch.params.tile_x || launch.params.tile_y))
        throw std::logic_error("a launch driven by changed tiles covers one whole layer, without a tail");
    if (launch.frame &&
        (!runs_packed(launch) || (launch.params.kind != TVLM_BOX_UNORM8 && launch.params.kind != TVLM_BOX_FLOAT16) ||
         launch.changed_tiles || launch.params.tile_x || launch.params.tile_y ||
         reinterpret_cast<uintptr_t>(launch.frame) % 16 || launch.frame_row_bytes % 16))
        throw std::logic_error(
            "a frame is read by a whole first pass of the packed RGBA8 or RGBA16F kernel, 16-byte aligned");
    const dim3 grid(launch.tiles_x, launch.tiles_y, launch.layers);
    switch (launch.texel) {
        case SurfaceTexel::uchar4: launch_kernel<SurfaceTexel::uchar4>(launch, grid, stream); break;
        case SurfaceTexel::half4: launch_kernel<SurfaceTexel::half4>(launch, grid, stream); break;
        case SurfaceTexel::float4: launch_kernel<SurfaceTexel::float4>(launch, grid, stream); break;
        case SurfaceTexel::float1: launch_kernel<SurfaceTexel::float1>(launch, grid, stream); break;
    }
    TVLM_CUDA_CHECK(cudaGetLastError());
}

void launch_box_deferred_tail(const BoxMipsLaunch& launch, cudaStream_t stream) {
    if (!launch.tail.levels || !launch.tail.deferred || !runs_packed(launch))
        throw std::logic_error("a deferred box tail follows a packed launch whose tail was deferred");
    with_packed_words(launch.params.kind, [&](auto words) {
        launch_kernel_early(box_packed_deferred_tail_kernel<decltype(words)>, dim3(1, 1, launch.layers),
                            dim3(TVLM_BOX_THREADS), stream, true, launch);
    });
    TVLM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tvlm
