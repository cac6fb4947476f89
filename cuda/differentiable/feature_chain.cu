// The box chain of a feature texture (levels 1.. from level 0) and its adjoint, the fold
// of every level's gradient into level 0, in T on channels-last levels: one thread per
// texel channel, the arithmetic of engine/differentiable/. The adjoint gathers, so it needs
// no atomics. The points' kernels are in point_forward.cu and point_backward.cu.
#include <algorithm>
#include <string>
#include <type_traits>

#include "cuda_check.h"
#include "early_launch.cuh"
#include "error.h"
#include "fast_divmod.h"
#include "feature_levels.cuh"
#include "point_sampling_grad.h"

namespace tvlm {

namespace {

using namespace feature_levels;

// Box taps of destination i over a source axis of size s (engine/mips/box_filter.h).
struct Taps {
    uint32_t first, count, weight[3], sum;
};
__device__ Taps taps(uint32_t i, uint32_t s) {
    if (s == 1) return {i, 1, {1, 0, 0}, 1};
    if (s % 2 == 0) return {2 * i, 2, {1, 1, 0}, 2};
    const uint32_t d = s / 2;
    return {2 * i, 3, {d - i, d, i + 1}, s};
}

// The destinations whose taps read source j on an axis of size s, with the tap's weight
// over the axis sum: at most two.
struct Dependents {
    uint32_t index[2];
    float weight_num[2];
    uint32_t count, sum;
};
__device__ Dependents dependents(uint32_t j, uint32_t s) {
    Dependents d{{0, 0}, {0, 0}, 0, 1};
    if (s == 1) return {{j, 0}, {1, 0}, 1, 1};
    if (s % 2 == 0) return {{j / 2, 0}, {1, 0}, 1, 2};
    const uint32_t half = s / 2;
    d.sum = s;
    if (j / 2 < half) {  // tap 0 or 1 of destination j / 2
        d.index[d.count] = j / 2;
        d.weight_num[d.count++] = float(j % 2 == 0 ? half - j / 2 : half);
    }
    if (j % 2 == 0 && j >= 2) {  // tap 2 of destination j / 2 - 1
        d.index[d.count] = j / 2 - 1;
        d.weight_num[d.count++] = float(j / 2);
    }
    return d;
}

template <class T> __device__ T quarter(T v) { return v * T(0.25); }
__device__ float4 quarter4(float4 v) { return v * 0.25f; }

// The 2x2 average of source texels (2x, 2y)..(2x+1, 2y+1) of plane `in` (multiplying by
// 1/4 is exactly /4).
template <class T>
__device__ T halved(const T* in, const Level& s, uint32_t x, uint32_t y) {
    const T* r = in + (size_t(2 * y) * s.width + 2 * x) * s.texel;
    const size_t row = size_t(s.width) * s.texel;
    return quarter((r[0] + r[s.texel]) + (r[row] + r[row + s.texel]));
}

// The box of destination (x, y) over source plane `in` (element 0 of a layer and channel).
// halving: both source sides even, every texel the 2x2 average (the general taps cost
// more instructions than the memory traffic allows).
template <class T>
__device__ T box_value(const T* in, const Level& s, uint32_t x, uint32_t y, bool halving) {
    if (halving) return halved(in, s, x, y);
    const Taps tx = taps(x, s.width), ty = taps(y, s.height);
    T n = 0;
#pragma unroll
    for (uint32_t b = 0; b < 3; ++b)  // fixed trip counts: the tap arrays stay in registers
#pragma unroll
        for (uint32_t a = 0; a < 3; ++a)
            if (b < ty.count && a < tx.count)
                n += T(tx.weight[a]) * T(ty.weight[b]) * in[(size_t(ty.first + b) * s.width + tx.first + a) * s.texel];
    return n / (T(tx.sum) * T(ty.sum));
}

// Grids are (element blocks of a row, rows, layers), a row's elements in (x, c) order,
// channels fastest: no 64-bit division per thread (the flat index version spent most of
// its time dividing); one 32-bit division splits the element into (x, c).
template <class T, bool kHalving>
__global__ void box_level_kernel(const T* src, T* dst, Level s, Level d, uint32_t channels) {
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, layer = blockIdx.z;
    if (e >= d.width * channels) return;
    const uint32_t x = e / channels, c = e - x * channels;
    dst[d.element(layer, size_t(y) * d.width + x, c)] = box_value(src + s.element(layer, 0, c), s, x, y, kHalving);
}

// Levels l+1 and l+2 from level l in one pass, where l and l+1 both halve: a thread takes
// one element of level l+2, averages the 4x4 of level l under it into the 2x2 of level l+1
// (written) and those into its own. Level l+1 is never read back: at 4096^2 RGBA that is
// 64 MB of the chain's 426. Sums in the order of the level-by-level kernels (bit-equal).
// (A float4 version for RGBA, a thread per texel, was no faster: 4096^2 138 us either way.)
template <class T>
__global__ void box_two_levels_kernel(const T* src, T* mid, T* dst, Level s, Level m, Level d, uint32_t channels) {
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, layer = blockIdx.z;
    if (e >= d.width * channels) return;
    const uint32_t x = e / channels, c = e - x * channels;
    const T* in = src + s.element(layer, 0, c);
    T* out = mid + m.element(layer, 0, c);
    const T v00 = halved(in, s, 2 * x, 2 * y), v10 = halved(in, s, 2 * x + 1, 2 * y);
    const T v01 = halved(in, s, 2 * x, 2 * y + 1), v11 = halved(in, s, 2 * x + 1, 2 * y + 1);
    const size_t row = size_t(m.width) * m.texel, at = (size_t(2 * y) * m.width + 2 * x) * m.texel;
    out[at] = v00;
    out[at + m.texel] = v10;
    out[at + row] = v01;
    out[at + row + m.texel] = v11;
    dst[d.element(layer, size_t(y) * d.width + x, c)] = quarter((v00 + v10) + (v01 + v11));
}

// Up to five levels that halve, from a coarse level (channels last): a block takes a
// 32x32 tile of the source level and four of its channels, averages it into the 16x16
// texels of the next level (a thread each), and those in shared memory into the 8x8, 4x4,
// 2x2 and 1x1 after it, writing each level as it goes. Level-by-level launches spent most
// of their time starting and draining: at 4096^2 RGBA the levels after 2 took 21.3 us in
// four launches for 22 MB, and take 11.0 + 5.1 us in two (ncu, H200); the second launch
// is this kernel on one tile, the 32x32 level the first ends at. Sums in the order of the
// level-by-level kernels (bit-equal).
constexpr uint32_t kPyramidLevels = 5, kPyramidSide = 1u << kPyramidLevels;  // source tile side

// The tiled kernels' blocks take four channels of one layer: blockIdx.z is (layer, group).
struct ChannelGroup {
    uint32_t layer, first, count;  // channels first .. first + count - 1 (count <= 4)
};
__device__ ChannelGroup channel_group(uint32_t channels) {
    const uint32_t groups = (channels + 3) / 4, group = blockIdx.z % groups;
    return {blockIdx.z / groups, 4 * group, min(4u, channels - 4 * group)};
}

template <class T>
__global__ void __launch_bounds__(kBlock) box_pyramid_kernel(const __grid_constant__ Shape<T> shape, ChainLevels<T> chain,
                                                             uint32_t source, uint32_t count, bool vector4) {
    constexpr uint32_t kHalf = kPyramidSide / 2;  // the tile's side at level source + 1
    static_assert(kHalf * kHalf == kBlock, "a thread per texel of the first level built");
    __shared__ T tile[2][kHalf * kHalf][4];
    await_previous_kernel();
    const ChannelGroup group = channel_group(shape.channels);
    const uint32_t layer = group.layer, first = group.first, channels = group.count, t = threadIdx.x;
    {
        const Level &s = shape.level[source], &d = shape.level[source + 1];
        const uint32_t x = blockIdx.x * kHalf + t % kHalf, y = blockIdx.y * kHalf + t / kHalf;
        T v[4] = {0, 0, 0, 0};
        if (x < d.width && y < d.height) {
            const T* in = level_base(shape, chain, source) + s.element(layer, 0, first);
            T* out = level_base(shape, chain, source + 1) + d.element(layer, size_t(y) * d.width + x, first);
            if constexpr (std::is_same_v<T, float>) {
                if (vector4) {  // four channels of 16-byte aligned texels: one load a texel
                    const auto at = [&](uint32_t i, uint32_t j) {
                        return *reinterpret_cast<const float4*>(in + (size_t(j) * s.width + i) * s.texel);
                    };
                    const float4 sum = quarter4((at(2 * x, 2 * y) + at(2 * x + 1, 2 * y)) +
                                                (at(2 * x, 2 * y + 1) + at(2 * x + 1, 2 * y + 1)));
                    *reinterpret_cast<float4*>(out) = sum;
                    v[0] = sum.x, v[1] = sum.y, v[2] = sum.z, v[3] = sum.w;
                }
            }
            if (!vector4) {
#pragma unroll
                for (uint32_t c = 0; c < 4; ++c)
                    if (c < channels) out[c] = v[c] = halved(in + c, s, x, y);
            }
        }
#pragma unroll
        for (uint32_t c = 0; c < 4; ++c) tile[0][t][c] = v[c];
    }
    for (uint32_t k = 2; k <= count; ++k) {
        __syncthreads();
        const uint32_t side = kPyramidSide >> k;  // 8, 4, 2, 1
        if (t >= side * side) continue;
        const Level& d = shape.level[source + k];
        const uint32_t tx = t % side, ty = t / side, x = blockIdx.x * side + tx, y = blockIdx.y * side + ty;
        const T(*from)[4] = tile[k % 2];
        const uint32_t i00 = 2 * ty * 2 * side + 2 * tx;  // the 2x2 under (tx, ty), rows 2 * side apart
        T* out = x < d.width && y < d.height ? level_base(shape, chain, source + k) + d.element(layer, size_t(y) * d.width + x, first)
                                            : nullptr;
#pragma unroll
        for (uint32_t c = 0; c < 4; ++c) {
            const T v = quarter((from[i00][c] + from[i00 + 1][c]) + (from[i00 + 2 * side][c] + from[i00 + 2 * side + 1][c]));
            tile[(k + 1) % 2][t][c] = v;
            if (out && c < channels) out[c] = v;
        }
    }
}

// What the coarse level's gradient sends back to fine element (x, y) of a plane; `g` is
// the coarse plane's element 0 (a gather: no atomics).
template <class T>
__device__ T fold_value(const T* g, const Level& fine, const Level& coarse, uint32_t x, uint32_t y, bool halving) {
    if (halving) return g[(size_t(y / 2) * coarse.width + x / 2) * coarse.texel] * T(0.25);  // one dependent
    const Dependents dx = dependents(x, fine.width), dy = dependents(y, fine.height);
    T sum = 0;
#pragma unroll
    for (uint32_t b = 0; b < 2; ++b)  // fixed trip counts: the arrays stay in registers
#pragma unroll
        for (uint32_t a = 0; a < 2; ++a)
            if (b < dy.count && a < dx.count)
                sum += g[(size_t(dy.index[b]) * coarse.width + dx.index[a]) * coarse.texel] * T(dx.weight_num[a]) *
                       T(dy.weight_num[b]);
    return sum / (T(dx.sum) * T(dy.sum));
}

// Adds to each fine element what the coarse level's gradient sends back to it. kAssign:
// the fine level holds nothing yet (level 0, whose own texel gradients are scattered after
// the fold), so it is written, not read and written: the image's gradient is the largest
// buffer of the step, and this way it is touched once.
template <class T, bool kHalving, bool kAssign>
__global__ void fold_level_kernel(T* fine_grad, const T* coarse_grad, Level fine, Level coarse, uint32_t channels,
                                  uint32_t* nonfinite) {
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, layer = blockIdx.z;
    if (e >= fine.width * channels) return;
    const uint32_t x = e / channels, c = e - x * channels;
    T* out = fine_grad + fine.element(layer, size_t(y) * fine.width + x, c);
    const T sent = fold_value(coarse_grad + coarse.element(layer, 0, c), fine, coarse, x, y, kHalving);
    if (kAssign) raise_if_nonfinite(nonfinite, sent);
    *out = kAssign ? sent : *out + sent;
}

// Level 0's gradient written in one pass from levels 1..depth of the gradient (level depth
// already holding what the levels below it send back), where levels 0..depth-1 all halve:
// a level-0 texel then gets g_l[x >> l, y >> l] / 4^l from each. Written, never read;
// the level-by-level fold reads and writes every fine level once per step, and at 4096^2
// its level-0 pass alone took 0.3 ms on an H200 (four times its bytes). The four level-0
// texels under one level-1 texel get the same sum: a thread computes it once and stores
// it four times (two rows of two). Up to 3 levels, or up to 6 where level 0 is small
// (kShortFold): there the launches of folding levels 4.. one by one are most of the fold's
// time (H200, 1024^2 RGBA: 25 -> 14 us), where on large images the extra reads per texel
// cost more than the launches save (4096^2 RGBA 119 -> 125 us, 32 x 1024^2 213 -> 235 us).
constexpr uint32_t kMaxFusedFold = 6, kFusedFold = 3;
constexpr size_t kShortFold = size_t{1} << 22;  // values of level 0

struct FusedFold {
    uint32_t width, height, channels, depth;
    uint32_t pair_rows;         // rows of level-0 row pairs: layers * height / 2
    size_t plane;               // texels of a level-0 plane (width * height)
    bool planar, pair_stores;   // pair_stores: planar, and x, x+1 stored as one 2-element vector
    FastDivmod by_half_height;  // pair row -> (layer, y / 2)
    uint32_t level_width[kMaxFusedFold + 1], level_height[kMaxFusedFold + 1];
    size_t coarse_offset[kMaxFusedFold + 1];  // level l's first element in the coarse buffer
};

// Level l's texel of level-0 texel (layer, x, y), channel 0.
template <class T>
__device__ const T* fold_source(const T* coarse, const FusedFold& f, uint32_t l, uint32_t layer, uint32_t x, uint32_t y) {
    return coarse + f.coarse_offset[l] +
           ((size_t(layer) * f.level_height[l] + (y >> l)) * f.level_width[l] + (x >> l)) * f.channels;
}

// Channels last, float, channels % 4 == 0: a thread takes 4 consecutive elements of a
// level-0 row (4 channels of one texel), read as float4, and writes them to that texel and
// the one below it (the same sum): each store instruction of a warp is one run (a thread
// per texel with a loop over 40 channels wrote 160-byte strides: 4x slower; a thread per
// 2x2 texels wrote every other 16 bytes per instruction, RGBA 4096^2 170 -> 192 us on an H100).
template <uint32_t kMost>  // the most levels it reads: kFusedFold or kMaxFusedFold (loops unrolled to it)
__global__ void fused_fold_groups_kernel(float* level0, const float* coarse, const __grid_constant__ FusedFold f,
                                         uint32_t* nonfinite) {
    await_previous_kernel();
    const uint32_t first = 4 * (blockIdx.x * blockDim.x + threadIdx.x), row_length = f.width * f.channels;
    if (first >= row_length) return;
    const uint32_t x = first / f.channels, c = first - x * f.channels;
    for (uint32_t r = blockIdx.y; r < f.pair_rows; r += gridDim.y) {
        uint32_t half_y;
        const uint32_t layer = f.by_half_height.divmod(r, half_y), y = 2 * half_y;
        float4 g[kMost + 1];
#pragma unroll
        for (uint32_t l = 1; l <= kMost; ++l)  // unrolled: the levels' reads in flight together
            if (l <= f.depth) g[l] = *reinterpret_cast<const float4*>(fold_source(coarse, f, l, layer, x, y) + c);
        float4 sum{0, 0, 0, 0};
        float weight = 1;
#pragma unroll
        for (uint32_t l = 1; l <= kMost; ++l) {
            weight *= 0.25f;
            if (l > f.depth) break;
            sum = sum + g[l] * weight;
        }
        // x * 0 is NaN exactly for a non-finite x (0 otherwise): one check for the four.
        raise_if_nonfinite(nonfinite, sum.x * 0.f + sum.y * 0.f + sum.z * 0.f + sum.w * 0.f);
        float* out = level0 + size_t(2 * r) * row_length + first;  // row 2r is (layer, y)
        *reinterpret_cast<float4*>(out) = sum;
        *reinterpret_cast<float4*>(out + row_length) = sum;
    }
}

template <class T> struct PairOf;
template <> struct PairOf<float> { using type = float2; };
template <> struct PairOf<double> { using type = double2; };

// Any layout and channel count: a thread takes one level-1 texel and loops over its
// channels, finding each level's texel once, and writes the 2x2 level-0 texels under it;
// neighbouring lanes take neighbouring texels, so a planar level 0's stores coalesce
// channel by channel (x and x + 1 as one vector where aligned).
template <class T, uint32_t kMost>
__global__ void fused_fold_texels_kernel(T* level0, const T* coarse, const __grid_constant__ FusedFold f,
                                         uint32_t* nonfinite) {
    await_previous_kernel();
    const uint32_t half_x = blockIdx.x * blockDim.x + threadIdx.x;
    if (half_x >= f.width / 2) return;
    const uint32_t x = 2 * half_x, C = f.channels;
    for (uint32_t r = blockIdx.y; r < f.pair_rows; r += gridDim.y) {
        uint32_t half_y;
        const uint32_t layer = f.by_half_height.divmod(r, half_y), y = 2 * half_y;
        const T* from[kMost + 1];
#pragma unroll
        for (uint32_t l = 1; l <= kMost; ++l)
            if (l <= f.depth) from[l] = fold_source(coarse, f, l, layer, x, y);
        for (uint32_t c = 0; c < C; ++c) {
            T sum = 0, weight = 1;
#pragma unroll
            for (uint32_t l = 1; l <= kMost; ++l) {
                weight *= T(0.25);
                if (l > f.depth) break;
                sum += from[l][c] * weight;
            }
            raise_if_nonfinite(nonfinite, sum);
            if (f.planar) {
                T* out = level0 + (size_t(layer) * C + c) * f.plane + size_t(y) * f.width + x;
                if (f.pair_stores) {
                    using Pair = typename PairOf<T>::type;
                    *reinterpret_cast<Pair*>(out) = Pair{sum, sum};
                    *reinterpret_cast<Pair*>(out + f.width) = Pair{sum, sum};
                } else {
                    out[0] = out[1] = out[f.width] = out[f.width + 1] = sum;
                }
            } else {
                T* out = level0 + (size_t(2 * r) * f.width + x) * C + c;  // row 2r is (layer, y)
                out[0] = out[C] = sum;
                out[size_t(f.width) * C] = out[size_t(f.width + 1) * C] = sum;
            }
        }
    }
}

// The small levels of a chain (and of its fold) in one block, level after level: a launch
// costs ~2.3 us on an H200 even for one block, and a 4096^2 chain has nine levels of
// 64x64 or less (22 us of its 137 as separate launches). A level is small when it holds
// at most kTailValues elements: one block is one multiprocessor, and with 16384 (64x64
// RGBA) the tail took 27 us, more than the launches it saved. The block's writes are
// visible to it after a barrier.
constexpr uint32_t kTailValues = 2048, kTailBlock = 1024;

// (layer, x, y, c) of element i of a level's (layer, y, x, c) order.
struct ElementPlace {
    uint32_t layer, x, y, c;
};
__device__ ElementPlace place_of(uint32_t i, const Level& level, uint32_t channels) {
    const uint32_t row = level.width * channels, layer_size = row * level.height;
    ElementPlace p;
    p.layer = i / layer_size;
    const uint32_t in_layer = i - p.layer * layer_size;
    p.y = in_layer / row;
    const uint32_t e = in_layer - p.y * row;
    p.x = e / channels;
    p.c = e - p.x * channels;
    return p;
}

// Levels first.. of the chain, each from the one before.
template <class T>
__global__ void box_tail_kernel(const __grid_constant__ Shape<T> shape, ChainLevels<T> chain, uint32_t first) {
    for (uint32_t l = first; l < shape.levels; ++l) {
        const Level &s = shape.level[l - 1], &d = shape.level[l];
        const T* src = level_base(shape, chain, l - 1);
        T* dst = level_base(shape, chain, l);
        const bool halving = s.width % 2 == 0 && s.height % 2 == 0;
        const uint32_t count = d.width * d.height * shape.channels * shape.layers;
        for (uint32_t i = threadIdx.x; i < count; i += blockDim.x) {
            const ElementPlace p = place_of(i, d, shape.channels);
            dst[d.element(p.layer, size_t(p.y) * d.width + p.x, p.c)] =
                box_value(src + s.element(p.layer, 0, p.c), s, p.x, p.y, halving);
        }
        __syncthreads();
    }
}

// The gradient's levels from the coarsest down to `last` folded each into the level above
// it (last >= 2: level 1 and finer are left to the large kernels).
template <class T>
__global__ void fold_tail_kernel(const __grid_constant__ Shape<T> shape, ChainLevels<T> grad, uint32_t last) {
    for (uint32_t l = shape.levels - 1; l >= last; --l) {
        const Level &fine = shape.level[l - 1], &coarse = shape.level[l];
        T* dst = level_base(shape, grad, l - 1);
        const T* g = level_base(shape, grad, l);
        const bool halving = fine.width % 2 == 0 && fine.height % 2 == 0;
        const uint32_t count = fine.width * fine.height * shape.channels * shape.layers;
        for (uint32_t i = threadIdx.x; i < count; i += blockDim.x) {
            const ElementPlace p = place_of(i, fine, shape.channels);
            dst[fine.element(p.layer, size_t(p.y) * fine.width + p.x, p.c)] +=
                fold_value(g + coarse.element(p.layer, 0, p.c), fine, coarse, p.x, p.y, halving);
        }
        __syncthreads();
    }
}

// Level `target`'s gradient with levels target+1..top folded into it, where each of
// levels target..top-1 halves into the next: G_l = g_l + G_{l+1}[x / 2, y / 2] / 4, from the
// coarsest (the level-by-level kernels' sums). One launch where those took one a level,
// each mostly starting and draining (4096^2 RGBA: the fold 119 -> 100 us, H200). A block
// takes a 16x16 tile of `target` and four channels: the tile's ancestors four levels up
// are 8x8, 4x4, 2x2 and 1 texels of the tile, and above those one texel a level, a thread
// a channel. Every value is read first; then five steps through shared memory. (A thread
// per element finding its ancestors at every level took 33-46 us there, address
// arithmetic and dependent reads; this takes 10.6 us, ncu.) The levels between keep their
// own gradients (nothing reads them).
template <class T>
__global__ void __launch_bounds__(kBlock) fold_ancestors_kernel(const __grid_constant__ Shape<T> shape, ChainLevels<T> grad,
                                                                uint32_t target, uint32_t top) {
    constexpr uint32_t kSide = kPyramidSide / 2, kInTile = kPyramidLevels - 1;  // 16x16; 4 levels above it in the tile
    __shared__ T folded[kInTile + 1][kSide / 2 * kSide / 2][4];                    // G of level target + k, k = 1..5
    const ChannelGroup group = channel_group(shape.channels);
    const uint32_t layer = group.layer, first = group.first, channels = group.count, t = threadIdx.x;
    const uint32_t count = top - target, in_tile = min(count, kInTile);
    // Texel i of the tile's part of level target + k, or null past the level's edge.
    const auto texel = [&](uint32_t k, uint32_t i) -> T* {
        const uint32_t side = kSide >> k, x = blockIdx.x * side + i % side, y = blockIdx.y * side + i / side;
        const Level& level = shape.level[target + k];
        if (x >= level.width || y >= level.height) return nullptr;
        return level_base(shape, grad, target + k) + level.element(layer, size_t(y) * level.width + x, first);
    };
    await_previous_kernel();
    // Threads 0..63 read the tile's 8x8 texels of level target + 1, 64..79 the 4x4 of
    // target + 2, 80..83 the 2x2, 84 the 1x1 (as far as `top`).
    uint32_t k_up = 0, index = 0;
    for (uint32_t k = 1, base = 0; k <= in_tile; base += (kSide >> k) * (kSide >> k), ++k)
        if (k_up == 0 && t >= base && t - base < (kSide >> k) * (kSide >> k)) k_up = k, index = t - base;
    T* out = texel(0, t);
    const T* above = k_up ? texel(k_up, index) : nullptr;
    T own[4] = {0, 0, 0, 0}, up[4] = {0, 0, 0, 0};
#pragma unroll
    for (uint32_t c = 0; c < 4; ++c)
        if (c < channels) {
            if (out) own[c] = out[c];
            if (above) up[c] = above[c];
        }
    // Levels above the tile's: one texel each, a channel a thread (threads 96..99), every
    // level read before the sums (a loop of dependent reads cost a latency a level).
    constexpr uint32_t kAboveThread = 96;
    if (count > kInTile && t >= kAboveThread && t - kAboveThread < channels) {
        const uint32_t c = first + t - kAboveThread;
        T g[kMaxLevels];
#pragma unroll
        for (uint32_t j = 0; j < kMaxLevels; ++j) {
            const uint32_t l = target + kPyramidLevels + j, s = kPyramidLevels + j - kInTile;  // blockIdx: the tile at target + 4
            if (l > top) break;
            const Level& level = shape.level[l];
            g[j] = level_base(shape, grad, l)[level.element(layer, size_t(blockIdx.y >> s) * level.width + (blockIdx.x >> s), c)];
        }
        T sum = 0;
#pragma unroll
        for (uint32_t j = kMaxLevels; j-- > 0;) {
            const uint32_t l = target + kPyramidLevels + j;
            if (l <= top) sum = l == top ? g[j] : g[j] + sum * T(0.25);
        }
        folded[kInTile][0][t - kAboveThread] = sum;
    }
    // From the top of the tile down: level target + k's G = g + G of its parent / 4.
    for (uint32_t k = in_tile; k >= 1; --k) {
        __syncthreads();
        const uint32_t side = kSide >> k;
        if (k == k_up && above) {
            const uint32_t parent = (index / side / 2) * (side / 2) + (index % side) / 2;
#pragma unroll
            for (uint32_t c = 0; c < 4; ++c)
                folded[k - 1][index][c] = k == count ? up[c] : up[c] + folded[k][parent][c] * T(0.25);
        }
    }
    __syncthreads();
    if (!out) return;
    const uint32_t parent = (t / kSide / 2) * (kSide / 2) + (t % kSide) / 2;
#pragma unroll
    for (uint32_t c = 0; c < 4; ++c)
        if (c < channels) out[c] = count == 0 ? own[c] : own[c] + folded[0][parent][c] * T(0.25);
}

// Whether the next level of `level` is its 2x2 box in both axes.
bool halves(const Level& level) { return level.width % 2 == 0 && level.height % 2 == 0; }

// The tiled kernels' grid over `level`: its 16x16 tiles, and (layer, channel group).
dim3 tile_grid(const Level& level, const FeatureChainShape& shape) {
    constexpr uint32_t side = kPyramidSide / 2;
    return dim3((level.width + side - 1) / side, (level.height + side - 1) / side, ((shape.channels + 3) / 4) * shape.layers);
}

// How many levels after `from` each halve the one before (from -> from + 1 -> ...).
template <class T> uint32_t halving_run(const Shape<T>& d, uint32_t from, uint32_t levels) {
    uint32_t run = 0;
    while (from + run + 1 < levels && halves(d.level[from + run])) ++run;
    return run;
}

// (element blocks of a row of `level`, its rows, layers).
dim3 level_grid(const Level& level, const FeatureChainShape& shape) {
    return dim3(unsigned((size_t(level.width) * shape.channels + kBlock - 1) / kBlock), level.height, shape.layers);
}

}  // namespace

void check_feature_chain(const FeatureChainShape& s) {
    if (s.layers == 0 || s.channels == 0 || s.width == 0 || s.height == 0)
        throw Error("a feature texture needs positive layers, channels, width and height");
    if (s.channels > 64) throw Error("feature textures hold 1..64 channels, not " + std::to_string(s.channels));
    if (s.height > 65535 || s.layers > 65535)
        throw Error("feature textures are at most 65535 texels high with at most 65535 layers");
    uint32_t full = 0;  // bit_width (this file is C++17)
    for (uint32_t size = std::max(s.width, s.height); size; size >>= 1) ++full;
    if (s.levels == 0 || s.levels > full || s.levels > kMaxLevels)
        throw Error("a " + std::to_string(s.width) + "x" + std::to_string(s.height) + " texture has 1.." +
                    std::to_string(std::min(full, kMaxLevels)) + " levels, not " + std::to_string(s.levels));
}

template <class T>
void build_feature_chain(const FeatureChainShape& shape, const T* level0, T* coarse, cudaStream_t stream) {
    check_feature_chain(shape);
    if (!level0 || (shape.levels > 1 && !coarse)) throw Error("a chain needs its level 0 and a buffer for the rest");
    const Shape<T> d = device_shape<T>(shape);
    const ChainLevels<T> chain{const_cast<T*>(level0), coarse};  // level 0 is only read
    uint32_t tail = 1;  // the first small level
    while (tail < shape.levels && shape.level_values(tail) > kTailValues) ++tail;
    const bool vector4 = std::is_same_v<T, float> && shape.channels % 4 == 0 && aligned16(coarse);
    // The largest level the pyramid starts from: 1024^2 with up to 4 channels (two
    // launches then build ten levels); with more, a block's texels lie C values apart, and
    // from 256^2 x 40 channels it ran 2.5 us slower than the two-level passes (H200), so
    // there it starts from one tile (32x32, where the one-block tail took over).
    const uint32_t pyramid_source = shape.channels <= 4 ? 1024 : kPyramidSide;
    for (uint32_t l = 1; l < shape.levels;) {
        const Level &s = d.level[l - 1], &m = d.level[l];
        const T* src = level_base(d, chain, l - 1);
        T* dst = level_base(d, chain, l);
        // From a coarse level of at most 1024x1024: the levels that halve after it, five a
        // launch (the second launch's source is at most 32x32, one tile).
        const uint32_t run = halving_run(d, l - 1, shape.levels);
        if (l >= 2 && run >= 2 && s.width <= pyramid_source && s.height <= pyramid_source) {
            for (uint32_t built = 0; built < run;) {
                const uint32_t count = std::min(run - built, kPyramidLevels);
                launch_kernel_early(box_pyramid_kernel<T>, tile_grid(d.level[l + built], shape), dim3(kBlock), stream, true, d,
                                    chain, l - 1 + built, count, vector4);
                built += count;
            }
            l += run;
            continue;
        }
        if (l >= tail) {
            box_tail_kernel<T><<<1, kTailBlock, 0, stream>>>(d, chain, l);
            TVLM_CUDA_CHECK(cudaGetLastError());
            break;
        }
        if (l + 1 < tail && halves(s) && halves(m)) {  // levels l and l+1 in one pass
            const Level& n = d.level[l + 1];
            T* next = level_base(d, chain, l + 1);
            box_two_levels_kernel<T><<<level_grid(n, shape), kBlock, 0, stream>>>(src, dst, next, s, m, n, shape.channels);
            TVLM_CUDA_CHECK(cudaGetLastError());
            l += 2;
            continue;
        }
        const dim3 grid = level_grid(m, shape);
        if (halves(s)) box_level_kernel<T, true><<<grid, kBlock, 0, stream>>>(src, dst, s, m, shape.channels);
        else box_level_kernel<T, false><<<grid, kBlock, 0, stream>>>(src, dst, s, m, shape.channels);
        TVLM_CUDA_CHECK(cudaGetLastError());
        ++l;
    }
}

template <class T>
void fold_chain_gradient(const FeatureChainShape& shape, ChainLevels<T> grad, cudaStream_t stream, uint32_t* nonfinite) {
    check_feature_chain(shape);
    if (!grad.level0 || (shape.levels > 1 && !grad.coarse)) throw Error("the fold needs the gradient's two parts");
    if (shape.levels == 1) {
        TVLM_CUDA_CHECK(cudaMemsetAsync(grad.level0, 0, shape.level_values(0) * sizeof(T), stream));
        return;
    }
    const Shape<T> d = device_shape<T>(shape);
    // Levels 0..depth-1 halve: level 0 is written from levels 1..depth in one pass, after
    // the levels below depth are folded into it. Those that halve on from it (to `top`)
    // in one launch; coarser ones, after an odd side, one by one (they are small).
    uint32_t depth = 0;
    const uint32_t most = shape.level_values(0) <= kShortFold ? kMaxFusedFold : kFusedFold;
    while (depth < std::min(most, shape.levels - 1) && halves(d.level[depth])) ++depth;
    const uint32_t target = std::max(depth, 1u);  // the finest level folded before the last step
    const uint32_t top = target + halving_run(d, target, shape.levels);
    const uint32_t last = top + 1;   // the finest level folded level by level
    uint32_t tail = shape.levels;    // levels tail.. fold in one block
    while (tail > last && shape.level_values(tail - 2) <= kTailValues) --tail;
    if (tail < shape.levels) {
        fold_tail_kernel<T><<<1, kTailBlock, 0, stream>>>(d, grad, tail);
        TVLM_CUDA_CHECK(cudaGetLastError());
    }
    for (uint32_t l = tail - 1; l >= last; --l) {
        const dim3 grid = level_grid(d.level[l - 1], shape);
        T* fine = level_base(d, grad, l - 1);
        const T* coarse = level_base(d, grad, l);
        if (halves(d.level[l - 1]))
            fold_level_kernel<T, true, false><<<grid, kBlock, 0, stream>>>(fine, coarse, d.level[l - 1], d.level[l], shape.channels,
                                                                           nullptr);
        else fold_level_kernel<T, false, false><<<grid, kBlock, 0, stream>>>(fine, coarse, d.level[l - 1], d.level[l],
                                                                            shape.channels, nullptr);
        TVLM_CUDA_CHECK(cudaGetLastError());
    }
    if (top > target) {
        launch_kernel_early(fold_ancestors_kernel<T>, tile_grid(d.level[target], shape), dim3(kBlock), stream, true, d, grad,
                            target, top);
    }
    if (depth == 0) {  // level 0 has an odd side: its taps take the general path
        fold_level_kernel<T, false, true><<<level_grid(d.level[0], shape), kBlock, 0, stream>>>(
            grad.level0, grad.coarse, d.level[0], d.level[1], shape.channels, nonfinite);
        TVLM_CUDA_CHECK(cudaGetLastError());
        return;
    }
    FusedFold f{};
    f.width = shape.width;
    f.height = shape.height;
    f.channels = shape.channels;
    f.depth = depth;
    f.pair_rows = shape.layers * (shape.height / 2);
    f.plane = size_t{shape.width} * shape.height;
    f.planar = shape.planar_level0;
    f.pair_stores = f.planar && reinterpret_cast<uintptr_t>(grad.level0) % (2 * sizeof(T)) == 0;
    f.by_half_height = FastDivmod(shape.height / 2);
    for (uint32_t l = 1; l <= depth; ++l) {
        f.level_width[l] = shape.level_width(l);
        f.level_height[l] = shape.level_height(l);
        f.coarse_offset[l] = shape.offset(l) - shape.level_values(0);
    }
    const uint32_t grid_rows = std::min(f.pair_rows, 65535u);
    bool groups = false;
    if constexpr (std::is_same_v<T, float>)
        groups = !shape.planar_level0 && shape.channels % 4 == 0 && aligned16(grad.level0) && aligned16(grad.coarse);
    // Each kernel's loops unroll to its most levels: one for 6 levels ran the 3-level folds
    // of large images 10% slower (H200, 32 x 1024^2 RGBA 213 -> 236 us).
    const dim3 group_grid(blocks_for(shape.width * shape.channels / 4), grid_rows);
    const dim3 texel_grid(blocks_for(shape.width / 2), grid_rows);
    float* level0 = reinterpret_cast<float*>(grad.level0);
    const float* coarse = reinterpret_cast<const float*>(grad.coarse);
    // Launched early: its start overlaps the kernel before it (fold_ancestors_kernel).
    if (groups && most == kFusedFold)
        launch_kernel_early(fused_fold_groups_kernel<kFusedFold>, group_grid, dim3(kBlock), stream, true, level0, coarse, f, nonfinite);
    else if (groups)
        launch_kernel_early(fused_fold_groups_kernel<kMaxFusedFold>, group_grid, dim3(kBlock), stream, true, level0, coarse, f,
                            nonfinite);
    else if (most == kFusedFold)
        launch_kernel_early(fused_fold_texels_kernel<T, kFusedFold>, texel_grid, dim3(kBlock), stream, true, grad.level0,
                            static_cast<const T*>(grad.coarse), f, nonfinite);
    else
        launch_kernel_early(fused_fold_texels_kernel<T, kMaxFusedFold>, texel_grid, dim3(kBlock), stream, true, grad.level0,
                            static_cast<const T*>(grad.coarse), f, nonfinite);
}

#define TVLM_FEATURE_CHAIN(T)                                                                  \
    template void build_feature_chain<T>(const FeatureChainShape&, const T*, T*, cudaStream_t); \
    template void fold_chain_gradient<T>(const FeatureChainShape&, ChainLevels<T>, cudaStream_t, uint32_t*);
TVLM_FEATURE_CHAIN(float)
TVLM_FEATURE_CHAIN(double)

}  // namespace tvlm
