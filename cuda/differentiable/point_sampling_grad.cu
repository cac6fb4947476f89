// One thread (or a few lanes) per point for the forward and backward, one per texel channel
// for the chain and the adjoint (the fold); the arithmetic of engine/differentiable/ in T,
// on channels-last levels. The backward scatters texel gradients with atomicAdd (points
// land anywhere); the adjoint gathers, so it needs none. Order of a backward: coarse
// levels' atomics (and d/d uv, d/d lod), the fold writing level 0, level 0's atomics.
#include "point_sampling_grad.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda_check.h"
#include "cuda_devices.h"
#include "error.h"
#include "fast_divmod.h"

namespace tvlm {

namespace {

constexpr int kBlock = 256;

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

// A level: its size, where it starts in the chain's one index space (which picks the
// levels the backward sums in shared memory), and its element strides: element (layer, x,
// y, c) at layer * layer_stride + (y * width + x) * texel + c * channel.
struct Level {
    uint32_t width, height;
    size_t offset;
    size_t texel, channel, layer_stride;
    __host__ __device__ size_t element(uint32_t layer, size_t texel_index, uint32_t c) const {
        return layer * layer_stride + texel_index * texel + c * channel;
    }
};

// float4 arithmetic, channel by channel: an RGBA texel (channels last, 16-byte aligned) is
// one load, one store and one vector atomic, with each channel's arithmetic that of float.
__device__ float4 operator*(float4 a, float k) { return {a.x * k, a.y * k, a.z * k, a.w * k}; }
__device__ float4 operator-(float4 a, float4 b) { return {a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w}; }
__device__ float4 operator+(float4 a, float4 b) { return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w}; }
__device__ float dot4(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
template <class E> __device__ E quarter(E v) { return v * 0.25f; }
template <> __device__ double quarter(double v) { return v * 0.25; }

// The 2x2 average of source texels (2x, 2y)..(2x+1, 2y+1) of plane `in` (multiplying by
// 1/4 is exactly /4). E: the element (T, or float4 for a whole RGBA texel).
template <class E>
__device__ E halved(const E* in, const Level& s, uint32_t x, uint32_t y) {
    const E* r = in + (size_t(2 * y) * s.width + 2 * x) * s.texel;
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
template <class E>
__global__ void box_two_levels_kernel(const E* src, E* mid, E* dst, Level s, Level m, Level d, uint32_t channels) {
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, layer = blockIdx.z;
    if (e >= d.width * channels) return;
    const uint32_t x = e / channels, c = e - x * channels;
    const E* in = src + s.element(layer, 0, c);
    E* out = mid + m.element(layer, 0, c);
    const E v00 = halved(in, s, 2 * x, 2 * y), v10 = halved(in, s, 2 * x + 1, 2 * y);
    const E v01 = halved(in, s, 2 * x, 2 * y + 1), v11 = halved(in, s, 2 * x + 1, 2 * y + 1);
    const size_t row = size_t(m.width) * m.texel, at = (size_t(2 * y) * m.width + 2 * x) * m.texel;
    out[at] = v00;
    out[at + m.texel] = v10;
    out[at + row] = v01;
    out[at + row + m.texel] = v11;
    dst[d.element(layer, size_t(y) * d.width + x, c)] = quarter((v00 + v10) + (v01 + v11));
}

// Level 0's folded gradient is non-finite exactly when some coarse gradient is (every
// coarse texel sends a positive share to level 0) or their sum overflowed: the fold checks
// what it writes, and the backward checks its upstream gradients, raising `nonfinite`
// (a NonFiniteFlag's word; null: not checked).
template <class T> __device__ void raise_if_nonfinite(uint32_t* nonfinite, T value) {
    if (nonfinite && !isfinite(value)) *nonfinite = 1;
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

// Lanes per point in the sampling kernels: a power of two, about one per 4 channels (at
// most a warp), so a point's channels are read as one contiguous run of its texels
// (channels last) by neighbouring lanes, and its uv / lod gradients are summed with
// shuffles. Up to 4 channels one thread reads a texel's channels alone (they share a sector).
uint32_t lanes_for(uint32_t channels) {
    uint32_t lanes = 1;
    while (lanes * 4 < channels && lanes < 32) lanes *= 2;
    return lanes;
}

template <class T> struct Shape {
    uint32_t layers, channels, levels, lanes, lane_bits;
    size_t level0_values;
    Level level[16];
};

template <class T>
Shape<T> device_shape(const FeatureChainShape& s) {
    const uint32_t lanes = lanes_for(s.channels);
    uint32_t bits = 0;
    while ((1u << bits) < lanes) ++bits;
    Shape<T> d{s.layers, s.channels, s.levels, lanes, bits, s.level_values(0), {}};
    for (uint32_t l = 0; l < s.levels; ++l) {
        const size_t texels = size_t{s.level_width(l)} * s.level_height(l);
        const bool planar = l == 0 && s.planar_level0;
        d.level[l] = {s.level_width(l), s.level_height(l), s.offset(l), planar ? 1 : size_t{s.channels},
                      planar ? texels : 1, texels * s.channels};
    }
    return d;
}

// Level l's first element (host or device).
template <class T, class P>
__host__ __device__ P* level_base(const Shape<T>& shape, ChainLevels<P> chain, uint32_t l) {
    return l == 0 ? chain.level0 : chain.coarse + (shape.level[l].offset - shape.level0_values);
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

// A bilinear sample's texels (indices in a layer's plane of texels) and weights in one
// level, clamp to edge.
template <class T> struct Bilinear {
    size_t i00, i10, i01, i11;
    T a, b, width, height;
};

template <class T>
__device__ Bilinear<T> bilinear_at(const Level& level, T u, T v) {
    Bilinear<T> s;
    s.width = T(level.width);
    s.height = T(level.height);
    const T x = u * s.width - T(0.5), y = v * s.height - T(0.5);
    const T fx = floor(x), fy = floor(y);
    s.a = x - fx;
    s.b = y - fy;
    const auto clamp = [](T i, T size) { return size_t(fmin(fmax(i, T(0)), size - 1)); };
    const size_t x0 = clamp(fx, s.width), x1 = clamp(fx + 1, s.width);
    const size_t y0 = clamp(fy, s.height), y1 = clamp(fy + 1, s.height);
    s.i00 = y0 * level.width + x0;
    s.i10 = y0 * level.width + x1;
    s.i01 = y1 * level.width + x0;
    s.i11 = y1 * level.width + x1;
    return s;
}

template <class T> struct LodPair {
    uint32_t base;
    T blend;
    bool has_next, free;
};

template <class T>
__device__ LodPair<T> lod_pair(uint32_t levels, T lod) {
    const T top = T(levels - 1);
    const T clamped = fmin(fmax(lod, T(0)), top);
    LodPair<T> p;
    p.base = uint32_t(fmin(floor(clamped), top));
    p.blend = clamped - T(p.base);
    p.has_next = p.base + 1 < levels;
    p.free = lod > T(0) && lod < top;
    return p;
}

// The four texels of a bilinear sample in channel c; `plane` is (layer, c)'s element 0.
template <class T> struct Quad {
    T t00, t10, t01, t11;
};
template <class T>
__device__ Quad<T> quad_at(const T* plane, const Level& level, const Bilinear<T>& s) {
    return {plane[s.i00 * level.texel], plane[s.i10 * level.texel], plane[s.i01 * level.texel],
            plane[s.i11 * level.texel]};
}
template <class T>
__device__ T blend_quad(const Quad<T>& q, const Bilinear<T>& s) {
    return (1 - s.b) * ((1 - s.a) * q.t00 + s.a * q.t10) + s.b * ((1 - s.a) * q.t01 + s.a * q.t11);
}

template <class T>
__device__ uint32_t layer_of(const PointBatch<T>& points, size_t i, uint32_t layers) {
    if (!points.layer) return 0;
    return uint32_t(min(max(points.layer[i], 0), int32_t(layers) - 1));
}

// RGBA levels (4 channels, 16-byte aligned: `texel4` below): a texel is one float4, read
// with one load and its gradient added with one vector atomic (sm_90 has them for global
// memory) where the level is channels last: a quarter of the instructions and atomics of
// the scalar path. A planar level 0 (torch's layout) gives its texels as float4 too, four
// planes read: every point of a warp then takes the same path (with level 0 on the scalar
// path, the ~8% of points below lod 1 made every warp run both: forward 52 -> 90 us).
__device__ void atomic_add4(float4* at, float4 v) {
#if __CUDA_ARCH__ >= 900
    atomicAdd(at, v);
#else
    atomicAdd(&at->x, v.x);
    atomicAdd(&at->y, v.y);
    atomicAdd(&at->z, v.z);
    atomicAdd(&at->w, v.w);
#endif
}
// RGBA texel i of a layer (`in_layer`: the layer's element 0), channels last or planar.
__device__ float4 texel4_at(const float* in_layer, const Level& level, size_t i) {
    if (level.texel == 4) return reinterpret_cast<const float4*>(in_layer)[i];
    const float* t = in_layer + i;
    return {t[0], t[level.channel], t[2 * level.channel], t[3 * level.channel]};
}
__device__ void add_texel4(float* in_layer, const Level& level, size_t i, float4 v) {
    if (level.texel == 4) return atomic_add4(reinterpret_cast<float4*>(in_layer) + i, v);
    float* t = in_layer + i;
    atomicAdd(t, v.x);
    atomicAdd(t + level.channel, v.y);
    atomicAdd(t + 2 * level.channel, v.z);
    atomicAdd(t + 3 * level.channel, v.w);
}
__device__ Quad<float4> quad4_at(const float* texels, const Level& level, uint32_t layer, const Bilinear<float>& s) {
    const float* t = texels + size_t(layer) * level.layer_stride;
    return {texel4_at(t, level, s.i00), texel4_at(t, level, s.i10), texel4_at(t, level, s.i01), texel4_at(t, level, s.i11)};
}
// Channels c..c+3 of texel i of a layer (`in_layer`: the layer's element 0): one float4
// where the level is channels last (4 | channels, 16-byte aligned buffers), four planes'
// values where it is planar.
__device__ float4 group_at(const float* in_layer, const Level& level, size_t i, uint32_t c) {
    const float* t = in_layer + i * level.texel + size_t(c) * level.channel;
    if (level.channel == 1) return *reinterpret_cast<const float4*>(t);
    return {t[0], t[level.channel], t[2 * level.channel], t[3 * level.channel]};
}
__device__ void add_group(float* in_layer, const Level& level, size_t i, float4 v, uint32_t c) {
    float* t = in_layer + i * level.texel + size_t(c) * level.channel;
    if (level.channel == 1) return atomic_add4(reinterpret_cast<float4*>(t), v);
    atomicAdd(t, v.x);
    atomicAdd(t + level.channel, v.y);
    atomicAdd(t + 2 * level.channel, v.z);
    atomicAdd(t + 3 * level.channel, v.w);
}
__device__ Quad<float4> quad_group_at(const float* texels, const Level& level, uint32_t layer, const Bilinear<float>& s,
                                      uint32_t c) {
    const float* t = texels + size_t(layer) * level.layer_stride;
    return {group_at(t, level, s.i00, c), group_at(t, level, s.i10, c), group_at(t, level, s.i01, c),
            group_at(t, level, s.i11, c)};
}
__device__ float4 blend_quad4(const Quad<float4>& q, const Bilinear<float>& s) {
    return (q.t00 * (1 - s.a) + q.t10 * s.a) * (1 - s.b) + (q.t01 * (1 - s.a) + q.t11 * s.a) * s.b;
}

// How a kernel takes a point's channels: one by one (any T and count), in float4 groups
// (float, 4 | channels, 16-byte aligned buffers: a texel's group is one load), or RGBA (one
// group: one thread per point). A template argument, so that each path's kernel carries
// only its own registers: the 40-channel job ran 1.3x slower with the scalar and RGBA
// paths in one kernel, and RGBA 48 -> 55 us with the group loop beside it.
enum class Channels { each, groups, rgba };

// Thread t serves point t / lanes, channels (t % lanes) + k * lanes.
template <class T, Channels kChannels>
__device__ void forward_point(const Shape<T>& shape, ChainLevels<const T> chain, const PointBatch<T>& points, T* out) {
    const size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x, i = t >> shape.lane_bits;
    if (i >= points.count) return;
    const uint32_t lane = uint32_t(t & (shape.lanes - 1));
    const T u = points.uv[2 * i], v = points.uv[2 * i + 1];
    const LodPair<T> p = lod_pair(shape.levels, points.lod[i]);
    const uint32_t layer = layer_of(points, i, shape.layers), next = p.blend > T(0) ? p.base + 1 : p.base;
    const Level &lo_level = shape.level[p.base], &hi_level = shape.level[next];
    const Bilinear<T> lo = bilinear_at(lo_level, u, v), hi = bilinear_at(hi_level, u, v);
    const T* lo_texels = level_base(shape, chain, p.base);
    const T* hi_texels = level_base(shape, chain, next);
    if constexpr (kChannels == Channels::rgba && std::is_same_v<T, float>) {
        float4 value = blend_quad4(quad4_at(lo_texels, lo_level, layer, lo), lo);
        if (next != p.base) value = value * (1 - p.blend) + blend_quad4(quad4_at(hi_texels, hi_level, layer, hi), hi) * p.blend;
        reinterpret_cast<float4*>(out)[i] = value;
    } else if constexpr (kChannels == Channels::groups && std::is_same_v<T, float>) {
        for (uint32_t c = 4 * lane; c < shape.channels; c += 4 * shape.lanes) {
            float4 value = blend_quad4(quad_group_at(lo_texels, lo_level, layer, lo, c), lo);
            if (next != p.base)
                value = value * (1 - p.blend) + blend_quad4(quad_group_at(hi_texels, hi_level, layer, hi, c), hi) * p.blend;
            *reinterpret_cast<float4*>(out + i * shape.channels + c) = value;
        }
    } else {
        for (uint32_t c = lane; c < shape.channels; c += shape.lanes) {
            T value = blend_quad(quad_at(lo_texels + lo_level.element(layer, 0, c), lo_level, lo), lo);
            if (next != p.base)
                value = (1 - p.blend) * value +
                        p.blend * blend_quad(quad_at(hi_texels + hi_level.element(layer, 0, c), hi_level, hi), hi);
            out[i * shape.channels + c] = value;
        }
    }
}

template <class T, Channels kChannels>  // each or rgba
__global__ void forward_kernel(const __grid_constant__ Shape<T> shape, ChainLevels<const T> chain, PointBatch<T> points,
                               T* out) {
    forward_point<T, kChannels>(shape, chain, points, out);
}

// Channels in groups: 3 blocks of 256 are resident at its 72-85 registers in any case, and
// allowed 85 nvcc keeps more of a point's loads in flight (40 channels on an H100: 72 -> 79
// registers, 540 -> 496 us). The same bound on the RGBA kernel made it slower (32 images
// of patches 42 -> 46 us), so this path has a kernel of its own.
__global__ void __launch_bounds__(kBlock, 3)
    forward_groups_kernel(const __grid_constant__ Shape<float> shape, ChainLevels<const float> chain,
                          PointBatch<float> points, float* out) {
    forward_point<float, Channels::groups>(shape, chain, points, out);
}

// Texel gradients of the coarsest levels (those that fit in kSharedBytes together, or the
// RGBA kernel's per-warp copies in kRgbaSharedBytes, and are small against the points a
// block takes: `sample_points_backward`) are summed in shared memory by each block first,
// then added to the chain once per block:
// with points anywhere, thousands land on the few texels of the 2x2 and 1x1 levels, and
// global atomics on one address serialize (1M points on a 4096^2 chain: 6.6 ms of the
// backward with global atomics only). Blocks stride over the points, so they are few.
constexpr size_t kSharedBytes = 32 * 1024;
// The RGBA kernel's copies of them, one per warp (48 KB: the most without opting in).
constexpr size_t kRgbaSharedBytes = 48 * 1024;

// What one pass of the backward does: scatter the texel gradients of levels [first, end),
// and (point_grads) write d loss / d uv and d loss / d lod. The backward runs two passes,
// the coarse levels and the point gradients before the fold, level 0 after it.
struct BackwardPass {
    uint32_t first, end;
    bool point_grads;
};

template <class T, Channels kChannels>  // each or groups (RGBA: backward_rgba_kernel)
__global__ void backward_kernel(const __grid_constant__ Shape<T> shape, ChainLevels<const T> chain,
                                PointBatch<T> points, const T* grad_out, ChainLevels<T> grad, T* grad_uv, T* grad_lod,
                                BackwardPass pass, size_t shared_base, uint32_t shared_values, uint32_t* nonfinite) {
    extern __shared__ unsigned char shared_bytes[];
    T* sums = reinterpret_cast<T*>(shared_bytes);
    for (uint32_t k = threadIdx.x; k < shared_values; k += blockDim.x) sums[k] = 0;
    __syncthreads();
    const uint32_t channels = shape.channels, lanes = shape.lanes, lane = threadIdx.x & (lanes - 1);
    const size_t per_block = blockDim.x >> shape.lane_bits, step = size_t(gridDim.x) * per_block;
    // The loop's bound is the same for a whole warp (points are whole lane groups of one
    // warp), so every lane reaches the shuffles.
    for (size_t first = size_t(blockIdx.x) * per_block; first < points.count; first += step) {
        const size_t i = first + (threadIdx.x >> shape.lane_bits);
        const bool real = i < points.count;
        T gu = 0, gv = 0, gl = 0;
        if (real) {
            const T u = points.uv[2 * i], v = points.uv[2 * i + 1];
            const LodPair<T> p = lod_pair(shape.levels, points.lod[i]);
            const uint32_t layer = layer_of(points, i, shape.layers);
            for (uint32_t k = 0; k < (p.has_next ? 2u : 1u); ++k) {
                const uint32_t l = p.base + k;
                const bool scatter = l >= pass.first && l < pass.end;
                if (!scatter && !pass.point_grads) continue;
                const Level& level = shape.level[l];
                const T weight = k == 0 ? 1 - p.blend : p.blend;
                const Bilinear<T> s = bilinear_at(level, u, v);
                const T* t = level_base(shape, chain, l);
                T* g = level_base(shape, grad, l);
                if constexpr (kChannels == Channels::groups && std::is_same_v<T, float>) {
                    for (uint32_t c = 4 * lane; c < channels; c += 4 * lanes) {
                        const float4 go = *reinterpret_cast<const float4*>(grad_out + i * channels + c), gw = go * weight;
                        if (pass.point_grads) raise_if_nonfinite(nonfinite, go.x * 0.f + go.y * 0.f + go.z * 0.f + go.w * 0.f);
                        if (scatter && (gw.x != 0 || gw.y != 0 || gw.z != 0 || gw.w != 0)) {
                            const size_t texels[4] = {s.i00, s.i10, s.i01, s.i11};
                            const float weights[4] = {(1 - s.a) * (1 - s.b), s.a * (1 - s.b), (1 - s.a) * s.b, s.a * s.b};
#pragma unroll
                            for (uint32_t j = 0; j < 4; ++j) {
                                const float4 value = gw * weights[j];
                                const size_t element = level.element(layer, texels[j], c);
                                if (level.offset + element < shared_base) {
                                    add_group(g + size_t(layer) * level.layer_stride, level, texels[j], value, c);
                                    continue;
                                }
                                float* at = sums + (level.offset + element - shared_base);
                                atomicAdd(at, value.x);
                                atomicAdd(at + level.channel, value.y);
                                atomicAdd(at + 2 * level.channel, value.z);
                                atomicAdd(at + 3 * level.channel, value.w);
                            }
                        }
                        if (!pass.point_grads) continue;
                        const Quad<float4> q = quad_group_at(t, level, layer, s, c);
                        gu += s.width * dot4(gw, (q.t10 - q.t00) * (1 - s.b) + (q.t11 - q.t01) * s.b);
                        gv += s.height * dot4(gw, (q.t01 - q.t00) * (1 - s.a) + (q.t11 - q.t10) * s.a);
                        if (p.free) gl += (k == 0 ? -1.f : 1.f) * dot4(go, blend_quad4(q, s));
                    }
                    continue;
                }
                const auto add = [&](size_t element, T value) {
                    if (level.offset + element >= shared_base) atomicAdd(sums + (level.offset + element - shared_base), value);
                    else atomicAdd(g + element, value);
                };
                for (uint32_t c = lane; c < channels; c += lanes) {
                    const T go = grad_out[i * channels + c];
                    const T gw = go * weight;
                    if (pass.point_grads) raise_if_nonfinite(nonfinite, go);  // the pass that reads every point
                    const size_t plane = level.element(layer, 0, c);
                    if (scatter && gw != T(0)) {
                        add(plane + s.i00 * level.texel, gw * (1 - s.a) * (1 - s.b));
                        add(plane + s.i10 * level.texel, gw * s.a * (1 - s.b));
                        add(plane + s.i01 * level.texel, gw * (1 - s.a) * s.b);
                        add(plane + s.i11 * level.texel, gw * s.a * s.b);
                    }
                    if (!pass.point_grads) continue;
                    const Quad<T> q = quad_at(t + plane, level, s);
                    gu += gw * s.width * ((1 - s.b) * (q.t10 - q.t00) + s.b * (q.t11 - q.t01));
                    gv += gw * s.height * ((1 - s.a) * (q.t01 - q.t00) + s.a * (q.t11 - q.t10));
                    if (p.free) gl += go * (k == 0 ? T(-1) : T(1)) * blend_quad(q, s);
                }
            }
        }
        if (!pass.point_grads) continue;  // the same for the whole grid
        for (uint32_t offset = lanes / 2; offset > 0; offset /= 2) {  // the point's lanes' sums
            gu += __shfl_xor_sync(0xffffffffu, gu, offset);
            gv += __shfl_xor_sync(0xffffffffu, gv, offset);
            gl += __shfl_xor_sync(0xffffffffu, gl, offset);
        }
        if (real && lane == 0) {
            if (grad_uv) {
                grad_uv[2 * i] = gu;
                grad_uv[2 * i + 1] = gv;
            }
            if (grad_lod) grad_lod[i] = gl;
        }
    }
    __syncthreads();
    for (uint32_t k = threadIdx.x; k < shared_values; k += blockDim.x) {
        if (sums[k] == T(0)) continue;
        const size_t index = shared_base + k;
        T* at = index < shape.level0_values ? grad.level0 + index : grad.coarse + (index - shape.level0_values);
        atomicAdd(at, sums[k]);
    }
}

// RGBA (float, 4 channels, 16-byte aligned buffers): a thread per point, a texel one
// float4 (four planes' values where level 0 is planar) and its gradient one vector atomic.
// The levels summed in shared memory have a copy per warp: the lanes that add to the same
// texel in one step are summed on one lane first (__match_any_sync), which adds to its
// warp's copy without atomics. Shared float atomics are compare-and-swap loops, and on the
// coarsest levels' few texels the lanes retried ~4.5 times per add: 40% of the pass's
// instructions (ncu, H100).
constexpr uint32_t kWarps = kBlock / 32, kNotShared = ~0u;

__device__ float4 shuffle4(float4 v, int from) {
    return {__shfl_sync(0xffffffffu, v.x, from), __shfl_sync(0xffffffffu, v.y, from),
            __shfl_sync(0xffffffffu, v.z, from), __shfl_sync(0xffffffffu, v.w, from)};
}

// Warp-wide (every lane calls it): adds v to the warp's copy at element `at` (channels
// `stride` apart), or nothing for kNotShared.
__device__ void add_in_warp(float* warp_sums, uint32_t at, uint32_t stride, float4 v) {
    const uint32_t lane = threadIdx.x % 32;
    const unsigned same = __match_any_sync(0xffffffffu, at);
    unsigned others = at == kNotShared ? 0u : same & ~(1u << lane);
    float4 sum = v;
    while (__any_sync(0xffffffffu, others != 0)) {  // as many rounds as the largest group has others
        const int from = others ? __ffs(others) - 1 : int(lane);
        const float4 got = shuffle4(v, from);
        if (others) {
            sum = sum + got;
            others &= others - 1;
        }
    }
    if (at != kNotShared && lane == uint32_t(__ffs(same) - 1)) {
        float* p = warp_sums + at;
        p[0] += sum.x;
        p[stride] += sum.y;
        p[2 * stride] += sum.z;
        p[3 * stride] += sum.w;
    }
}

__global__ void backward_rgba_kernel(const __grid_constant__ Shape<float> shape, ChainLevels<const float> chain,
                                     PointBatch<float> points, const float* grad_out, ChainLevels<float> grad,
                                     float* grad_uv, float* grad_lod, BackwardPass pass, size_t shared_base,
                                     uint32_t shared_values, uint32_t* nonfinite) {
    extern __shared__ unsigned char shared_bytes[];
    float* sums = reinterpret_cast<float*>(shared_bytes);  // kWarps copies of shared_values
    for (uint32_t k = threadIdx.x; k < kWarps * shared_values; k += blockDim.x) sums[k] = 0;
    __syncthreads();
    float* warp_sums = sums + (threadIdx.x / 32) * shared_values;
    const size_t step = size_t(gridDim.x) * blockDim.x;
    // The loop's bound and both k steps are the same for every lane of a warp: the shared
    // adds are the warp's together.
    for (size_t first = size_t(blockIdx.x) * blockDim.x; first < points.count; first += step) {
        const size_t i = first + threadIdx.x;
        const bool real = i < points.count;
        float u = 0, v = 0;
        LodPair<float> p{0, 0, false, false};
        uint32_t layer = 0;
        float4 go{0, 0, 0, 0};
        if (real) {
            u = points.uv[2 * i];
            v = points.uv[2 * i + 1];
            p = lod_pair(shape.levels, points.lod[i]);
            layer = layer_of(points, i, shape.layers);
            go = reinterpret_cast<const float4*>(grad_out)[i];
            if (pass.point_grads) raise_if_nonfinite(nonfinite, go.x * 0.f + go.y * 0.f + go.z * 0.f + go.w * 0.f);
        }
        float gu = 0, gv = 0, gl = 0;
        for (uint32_t k = 0; k < 2; ++k) {
            const uint32_t l = p.base + k;
            const bool present = real && (k == 0 || p.has_next);
            const bool scatter = present && l >= pass.first && l < pass.end;
            const Level& level = shape.level[present ? l : 0];
            const float weight = k == 0 ? 1 - p.blend : p.blend;
            const float4 gw = go * weight;
            const Bilinear<float> s = bilinear_at(level, u, v);
            const bool adds = scatter && (gw.x != 0 || gw.y != 0 || gw.z != 0 || gw.w != 0);
            const bool in_shared = adds && level.offset >= shared_base;  // whole levels are, or are not
            const size_t texels[4] = {s.i00, s.i10, s.i01, s.i11};
            const float weights[4] = {(1 - s.a) * (1 - s.b), s.a * (1 - s.b), (1 - s.a) * s.b, s.a * s.b};
            const size_t level_first = level.offset + size_t(layer) * level.layer_stride;
            float* g = level_base(shape, grad, present ? l : 0) + size_t(layer) * level.layer_stride;
            const bool warp_shares = __any_sync(0xffffffffu, in_shared);
#pragma unroll
            for (uint32_t j = 0; j < 4; ++j) {
                if (adds && !in_shared) add_texel4(g, level, texels[j], gw * weights[j]);
                if (warp_shares)
                    add_in_warp(warp_sums,
                                in_shared ? uint32_t(level_first + texels[j] * level.texel - shared_base) : kNotShared,
                                uint32_t(level.channel), gw * weights[j]);
            }
            if (!present || !pass.point_grads) continue;
            const Quad<float4> q = quad4_at(level_base(shape, chain, l), level, layer, s);
            gu += s.width * dot4(gw, (q.t10 - q.t00) * (1 - s.b) + (q.t11 - q.t01) * s.b);
            gv += s.height * dot4(gw, (q.t01 - q.t00) * (1 - s.a) + (q.t11 - q.t10) * s.a);
            if (p.free) gl += (k == 0 ? -1.f : 1.f) * dot4(go, blend_quad4(q, s));
        }
        if (!real || !pass.point_grads) continue;
        if (grad_uv) {
            grad_uv[2 * i] = gu;
            grad_uv[2 * i + 1] = gv;
        }
        if (grad_lod) grad_lod[i] = gl;
    }
    __syncthreads();
    for (uint32_t k = threadIdx.x; k < shared_values; k += blockDim.x) {
        float sum = 0;
#pragma unroll
        for (uint32_t w = 0; w < kWarps; ++w) sum += sums[w * shared_values + k];
        if (sum == 0.f) continue;
        const size_t index = shared_base + k;
        atomicAdd(index < shape.level0_values ? grad.level0 + index : grad.coarse + (index - shape.level0_values), sum);
    }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Whether the kernels may take channels in float4 groups (RGBA: a texel) for these buffers.
template <class T> bool groups4(const FeatureChainShape& shape, std::initializer_list<const void*> buffers) {
    if constexpr (!std::is_same_v<T, float>) {
        return false;
    } else {
        if (shape.channels % 4 != 0) return false;
        for (const void* b : buffers)
            if (!aligned16(b)) return false;
        return true;
    }
}

unsigned blocks_for(size_t threads) { return unsigned((threads + kBlock - 1) / kBlock); }

// Whether the next level of `level` is its 2x2 box in both axes.
bool halves(const Level& level) { return level.width % 2 == 0 && level.height % 2 == 0; }

// (element blocks of a row of `level`, its rows, layers).
dim3 level_grid(const Level& level, uint32_t channels, uint32_t layers) {
    return dim3(unsigned((size_t(level.width) * channels + kBlock - 1) / kBlock), level.height, layers);
}
dim3 level_grid(const Level& level, const FeatureChainShape& shape) {
    return level_grid(level, shape.channels, shape.layers);
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
    if (s.levels == 0 || s.levels > full || s.levels > 16)
        throw Error("a " + std::to_string(s.width) + "x" + std::to_string(s.height) + " texture has 1.." +
                    std::to_string(std::min(full, 16u)) + " levels, not " + std::to_string(s.levels));
}

template <class T>
void build_feature_chain(const FeatureChainShape& shape, const T* level0, T* coarse, cudaStream_t stream) {
    check_feature_chain(shape);
    if (!level0 || (shape.levels > 1 && !coarse)) throw Error("a chain needs its level 0 and a buffer for the rest");
    const Shape<T> d = device_shape<T>(shape);
    const ChainLevels<T> chain{const_cast<T*>(level0), coarse};  // level 0 is only read
    uint32_t tail = 1;  // the first small level
    while (tail < shape.levels && shape.level_values(tail) > kTailValues) ++tail;
    for (uint32_t l = 1; l < tail;) {
        const Level &s = d.level[l - 1], &m = d.level[l];
        const T* src = level_base(d, chain, l - 1);
        T* dst = level_base(d, chain, l);
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
    if (tail < shape.levels) {
        box_tail_kernel<T><<<1, kTailBlock, 0, stream>>>(d, chain, tail);
        TVLM_CUDA_CHECK(cudaGetLastError());
    }
}

template <class T>
void sample_points_forward(const FeatureChainShape& shape, ChainLevels<const T> chain, const PointBatch<T>& points,
                           T* out, cudaStream_t stream) {
    check_feature_chain(shape);
    if (points.count == 0) return;
    if (!chain.level0 || (shape.levels > 1 && !chain.coarse) || !points.uv || !points.lod || !out)
        throw Error("point sampling needs a chain, uv, lod and an output");
    const Shape<T> d = device_shape<T>(shape);
    const unsigned blocks = blocks_for(points.count * d.lanes);
    if (!groups4<T>(shape, {chain.level0, chain.coarse, out}))
        forward_kernel<T, Channels::each><<<blocks, kBlock, 0, stream>>>(d, chain, points, out);
    else if (shape.channels == 4)
        forward_kernel<T, Channels::rgba><<<blocks, kBlock, 0, stream>>>(d, chain, points, out);
    else if constexpr (std::is_same_v<T, float>)
        forward_groups_kernel<<<blocks, kBlock, 0, stream>>>(d, chain, points, out);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

// The coarsest levels of [first, end) whose elements fit in `room` together (the index
// space's tail: levels are counted finest first), each of at most `max_texels` texels (all
// layers), as (first element, count); none: count 0.
std::pair<size_t, uint32_t> shared_levels(const FeatureChainShape& shape, uint32_t first, uint32_t end, size_t room,
                                          size_t max_texels) {
    uint32_t from = end;
    while (from > first && shape.offset(end) - shape.offset(from - 1) <= room &&
           shape.level_values(from - 1) / shape.channels <= max_texels)
        --from;
    return {shape.offset(from), static_cast<uint32_t>(shape.offset(end) - shape.offset(from))};
}

template <class T>
void sample_points_backward(const FeatureChainShape& shape, ChainLevels<const T> chain, const PointBatch<T>& points,
                            const T* grad_out, ChainLevels<T> grad, T* grad_uv, T* grad_lod, cudaStream_t stream,
                            uint32_t* nonfinite) {
    check_feature_chain(shape);
    const bool coarse = shape.levels > 1;
    if (!chain.level0 || (coarse && !chain.coarse) || !grad.level0 || (coarse && !grad.coarse) ||
        (points.count && (!points.uv || !points.lod || !grad_out)))
        throw Error("the backward needs the chain, the points, the output gradient and a chain gradient buffer");
    // Level 0's gradient is the image's: the largest buffer, so it is never zeroed nor read
    // back. The coarse levels gather their texel gradients first, the fold writes level 0
    // from them, then level 0's own texel gradients are added on top.
    if (coarse) TVLM_CUDA_CHECK(cudaMemsetAsync(grad.coarse, 0, shape.coarse_values() * sizeof(T), stream));
    const Shape<T> d = device_shape<T>(shape);
    // Float channels in groups of 4 (float4 loads and vector atomics); RGBA: every point on
    // the float4 path, a copy of the shared levels per warp.
    const bool groups = groups4<T>(shape, {chain.level0, chain.coarse, grad.level0, grad.coarse, grad_out});
    const bool rgba = groups && shape.channels == 4;
    const void* kernel = rgba     ? reinterpret_cast<const void*>(backward_rgba_kernel)
                         : groups ? reinterpret_cast<const void*>(backward_kernel<T, Channels::groups>)
                                  : reinterpret_cast<const void*>(backward_kernel<T, Channels::each>);
    const size_t copies = rgba ? kWarps : 1, room = (rgba ? kRgbaSharedBytes : kSharedBytes) / (copies * sizeof(T));
    // One wave: as many blocks as the multiprocessors hold at once (registers bound it: 3 of
    // 256 threads on sm_90), each striding over the points and adding its shared sums once.
    // A part wave costs: on an H100, 4 blocks per SM (1.33 waves) made the RGBA backward 60
    // us slower than 3 or 6; on an H200, 6 against 4 took it 699 -> 626 us.
    int resident = 0;
    TVLM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kBlock, room * copies * sizeof(T)));
    const unsigned blocks = std::min(blocks_for(points.count * d.lanes),
                                     unsigned(std::max(resident, 1) * current_device_multiprocessors()));
    // A level is summed in shared memory where it has at most a quarter as many texels as a
    // block has points: then the block's adds to it are likely to outnumber its texels, and
    // its flush costs fewer global atomics than it saves. H100, RGBA 4096^2: backward 398 ->
    // 391 us against every level that fits; a sixteenth sent 64-texel levels to global
    // atomics (+70 us).
    const size_t max_texels = points.count / std::max(blocks, 1u) / 4;
    const auto run = [&](BackwardPass pass) {
        const auto [shared_base, shared_values] = shared_levels(shape, pass.first, pass.end, room, max_texels);
        const size_t shared_bytes = shared_values * copies * sizeof(T);
        if constexpr (std::is_same_v<T, float>) {
            if (rgba) {
                backward_rgba_kernel<<<blocks, kBlock, shared_bytes, stream>>>(
                    d, chain, points, grad_out, grad, grad_uv, grad_lod, pass, shared_base, shared_values, nonfinite);
                TVLM_CUDA_CHECK(cudaGetLastError());
                return;
            }
        }
        if (groups)
            backward_kernel<T, Channels::groups><<<blocks, kBlock, shared_bytes, stream>>>(
                d, chain, points, grad_out, grad, grad_uv, grad_lod, pass, shared_base, shared_values, nonfinite);
        else
            backward_kernel<T, Channels::each><<<blocks, kBlock, shared_bytes, stream>>>(
                d, chain, points, grad_out, grad, grad_uv, grad_lod, pass, shared_base, shared_values, nonfinite);
        TVLM_CUDA_CHECK(cudaGetLastError());
    };
    if (points.count) run({1, shape.levels, true});
    fold_chain_gradient(shape, grad, stream, nonfinite);
    if (points.count) run({0, 1, false});
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
    // the levels below depth are folded into it one by one (they are small).
    uint32_t depth = 0;
    const uint32_t most = shape.level_values(0) <= kShortFold ? kMaxFusedFold : kFusedFold;
    while (depth < std::min(most, shape.levels - 1) && halves(d.level[depth])) ++depth;
    const uint32_t last = std::max(depth, 1u) + 1;  // the finest level folded level by level
    uint32_t tail = shape.levels;                   // levels tail.. fold in one block
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
    if (groups && most == kFusedFold)
        fused_fold_groups_kernel<kFusedFold><<<group_grid, kBlock, 0, stream>>>(level0, coarse, f, nonfinite);
    else if (groups)
        fused_fold_groups_kernel<kMaxFusedFold><<<group_grid, kBlock, 0, stream>>>(level0, coarse, f, nonfinite);
    else if (most == kFusedFold)
        fused_fold_texels_kernel<T, kFusedFold><<<texel_grid, kBlock, 0, stream>>>(grad.level0, grad.coarse, f, nonfinite);
    else
        fused_fold_texels_kernel<T, kMaxFusedFold><<<texel_grid, kBlock, 0, stream>>>(grad.level0, grad.coarse, f,
                                                                                    nonfinite);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

#define TVLM_POINT_SAMPLING(T)                                                                                  \
    template void build_feature_chain<T>(const FeatureChainShape&, const T*, T*, cudaStream_t);                 \
    template void sample_points_forward<T>(const FeatureChainShape&, ChainLevels<const T>, const PointBatch<T>&, \
                                           T*, cudaStream_t);                                                    \
    template void sample_points_backward<T>(const FeatureChainShape&, ChainLevels<const T>, const PointBatch<T>&, \
                                            const T*, ChainLevels<T>, T*, T*, cudaStream_t, uint32_t*);           \
    template void fold_chain_gradient<T>(const FeatureChainShape&, ChainLevels<T>, cudaStream_t, uint32_t*);
TVLM_POINT_SAMPLING(float)
TVLM_POINT_SAMPLING(double)

}  // namespace tvlm
