// Differentiable point sampling on CUDA: one thread (or a few lanes) per point for the
// forward and backward, the arithmetic of engine/differentiable/ in T, on channels-last
// levels (level 0 planar or channels last). The backward scatters texel gradients with
// atomics (points land anywhere). Order of a backward: coarse levels' atomics (and d/d uv,
// d/d lod), the fold writing level 0 (feature_chain.cu), level 0's atomics.
#include "point_sampling_grad.h"

#include <algorithm>
#include <initializer_list>
#include <type_traits>
#include <utility>

#include "cuda_check.h"
#include "cuda_devices.h"
#include "early_launch.cuh"
#include "error.h"
#include "feature_levels.cuh"

namespace tvlm {

namespace {

using namespace feature_levels;

// A bilinear sample's texels (indices in a layer's plane of texels) and weights in one
// level, clamp to edge.
template <class T> struct Bilinear {
    size_t i00, i10, i01, i11;
    T a, b, width, height;
    // The four taps (texels 00, 10, 01, 11) and their weights, for the loops that scatter.
    struct Taps {
        size_t texel[4];
        T weight[4];
    };
    __device__ Taps taps() const {
        return {{i00, i10, i01, i11}, {(1 - a) * (1 - b), a * (1 - b), (1 - a) * b, a * b}};
    }
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

// The level table in shared memory, copied there by each block (every thread calls it).
// The lanes of a warp read different levels, and a kernel parameter read at an index that
// differs across a warp is served one index at a time by the constant cache. H100, `tvlm
// bench grad`: the many-channel backward 1492-1495 -> 1447-1448 us; the RGBA backward and
// the forward keep the parameter (RGBA backward 378-379 -> 442 us with the copy).
template <class T> __device__ void copy_levels(const Shape<T>& shape, Level* levels) {
    if (threadIdx.x < shape.levels) levels[threadIdx.x] = shape.level[threadIdx.x];
    __syncthreads();
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
// RGBA texel i of a layer (`in_layer`: the layer's element 0), channels last or planar:
// group_at(in_layer, level, i, 0) with a float4 index. The RGBA kernels keep these (the
// code measured here); on them instead of group_at's, one H200 run took the RGBA backward
// 311 -> 325 us, within that machine's run-to-run spread but not confirmed either way.
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

// d loss / d uv and d loss / d lod of point i, where the caller wants them.
template <class T> __device__ void store_point_grads(T* grad_uv, T* grad_lod, size_t i, T gu, T gv, T gl) {
    if (grad_uv) {
        grad_uv[2 * i] = gu;
        grad_uv[2 * i + 1] = gv;
    }
    if (grad_lod) grad_lod[i] = gl;
}

// Element `index` of the chain's one index space in `grad`.
template <class T> __device__ T* chain_element(const Shape<T>& shape, ChainLevels<T> grad, size_t index) {
    return index < shape.level0_values ? grad.level0 + index : grad.coarse + (index - shape.level0_values);
}

// What one pass of the backward does: scatter the texel gradients of levels [first, end),
// and (point_grads) write d loss / d uv and d loss / d lod. The backward runs one for the
// coarse levels and the point gradients before the fold; level 0's atomics after it are
// backward_level0_kernel's, or a second pass where level 0 is summed in shared memory.
struct BackwardPass {
    uint32_t first, end;
    bool point_grads;
};

// Channels one by one (any T and count; float groups: backward_groups_kernel, RGBA:
// backward_rgba_kernel), the levels summed in shared memory in one copy per block.
template <class T>
__global__ void backward_kernel(const __grid_constant__ Shape<T> shape, ChainLevels<const T> chain,
                                PointBatch<T> points, const T* grad_out, ChainLevels<T> grad, T* grad_uv, T* grad_lod,
                                BackwardPass pass, size_t shared_base, uint32_t shared_values, uint32_t* nonfinite) {
    extern __shared__ unsigned char shared_bytes[];
    T* sums = reinterpret_cast<T*>(shared_bytes);
    for (uint32_t k = threadIdx.x; k < shared_values; k += blockDim.x) sums[k] = 0;
    __shared__ Level levels[kMaxLevels];
    copy_levels(shape, levels);  // its barrier covers the sums' zeros too
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
                const Level& level = levels[l];
                const T weight = k == 0 ? 1 - p.blend : p.blend;
                const Bilinear<T> s = bilinear_at(level, u, v);
                const T* t = level_base(shape, levels, chain, l);
                T* g = level_base(shape, levels, grad, l);
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
        if (real && lane == 0) store_point_grads(grad_uv, grad_lod, i, gu, gv, gl);
    }
    __syncthreads();
    for (uint32_t k = threadIdx.x; k < shared_values; k += blockDim.x)
        if (sums[k] != T(0)) atomicAdd(chain_element(shape, grad, shared_base + k), sums[k]);
}

// What the float4 backward kernels read of point i before its levels: position, level
// pair, layer, and channels c..c+3 of its upstream gradient ([count, channels]; `group`:
// the lane has them), checked for NaN and infinity where `check`; an index past the end
// reads as zeros. (The same PTX as the kernels' own reads, but for the order of moves.)
struct PointRead {
    float u = 0, v = 0;
    LodPair<float> p{0, 0, false, false};
    uint32_t layer = 0;
    float4 go{0, 0, 0, 0};
};
__device__ PointRead read_point(const Shape<float>& shape, const PointBatch<float>& points, const float* grad_out,
                                size_t i, uint32_t channels, uint32_t c, bool group, bool check, uint32_t* nonfinite) {
    PointRead r;
    if (i < points.count) {
        r.u = points.uv[2 * i];
        r.v = points.uv[2 * i + 1];
        r.p = lod_pair(shape.levels, points.lod[i]);
        r.layer = layer_of(points, i, shape.layers);
        if (group) {
            r.go = *reinterpret_cast<const float4*>(grad_out + i * channels + c);
            if (check) raise_if_nonfinite(nonfinite, r.go.x * 0.f + r.go.y * 0.f + r.go.z * 0.f + r.go.w * 0.f);
        }
    }
    return r;
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
    __syncwarp();  // these writes before any lane's next read of the copy (the *_sync calls above order no memory)
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
        const auto [u, v, p, layer, go] = read_point(shape, points, grad_out, i, 4, 0, true, pass.point_grads, nonfinite);
        float gu = 0, gv = 0, gl = 0;
        for (uint32_t k = 0; k < 2; ++k) {
            const uint32_t l = p.base + k;
            const bool present = real && (k == 0 || p.has_next);
            const bool scatter = present && l >= pass.first && l < pass.end;
            const Level& level = shape.level[present ? l : 0];
            const float weight = k == 0 ? 1 - p.blend : p.blend;
            const float4 gw = go * weight;
            const Bilinear<float> s = bilinear_at(level, u, v);
            const bool adds = scatter && nonzero(gw);
            const bool in_shared = adds && level.offset >= shared_base;  // whole levels are, or are not
            const auto tap = s.taps();
            const size_t level_first = level.offset + size_t(layer) * level.layer_stride;
            float* g = level_base(shape, grad, present ? l : 0) + size_t(layer) * level.layer_stride;
            // The texels for d/d uv and d/d lod read before the scatter, which then hides
            // their latency (H200: RGBA 4096^2 backward 281 -> 276 us; 72 -> 80 registers,
            // still three blocks an SM).
            const bool grads = present && pass.point_grads;
            Quad<float4> q{};
            if (grads) q = quad4_at(level_base(shape, chain, l), level, layer, s);
            const bool warp_shares = __any_sync(0xffffffffu, in_shared);
#pragma unroll
            for (uint32_t j = 0; j < 4; ++j) {
                if (adds && !in_shared) add_texel4(g, level, tap.texel[j], gw * tap.weight[j]);
                if (warp_shares)
                    add_in_warp(warp_sums,
                                in_shared ? uint32_t(level_first + tap.texel[j] * level.texel - shared_base) : kNotShared,
                                uint32_t(level.channel), gw * tap.weight[j]);
            }
            if (!grads) continue;
            gu += s.width * dot4(gw, (q.t10 - q.t00) * (1 - s.b) + (q.t11 - q.t01) * s.b);
            gv += s.height * dot4(gw, (q.t01 - q.t00) * (1 - s.a) + (q.t11 - q.t10) * s.a);
            if (p.free) gl += (k == 0 ? -1.f : 1.f) * dot4(go, blend_quad4(q, s));
        }
        if (real && pass.point_grads) store_point_grads(grad_uv, grad_lod, i, gu, gv, gl);
    }
    __syncthreads();
    for (uint32_t k = threadIdx.x; k < shared_values; k += blockDim.x) {
        float sum = 0;
#pragma unroll
        for (uint32_t w = 0; w < kWarps; ++w) sum += sums[w * shared_values + k];
        if (sum != 0.f) atomicAdd(chain_element(shape, grad, shared_base + k), sum);
    }
}

// Where the groups kernel sums levels in shared memory: the coarsest (elements
// [slot_first, slot_first + slot_values)) in a copy per point slot of the block, the next
// finer ones ([block_first, slot_first)) in one copy per block, with shared atomics.
struct SharedSums {
    size_t block_first, slot_first;
    uint32_t slot_values;
    __host__ __device__ uint32_t block_values() const { return uint32_t(slot_first - block_first); }
};

// Float channels in groups of 4 (4 | channels, more than 4, 16-byte aligned buffers): a
// point's lanes take a group each (lanes_for gives a point a lane a group, up to 128
// channels). A block's threads serve kBlock / lanes points at a time, each from a slot of
// lanes; the coarsest levels have a copy per slot, so a slot's lanes (distinct channels)
// add to it with plain loads and stores: no atomics, no lanes waiting on each other. The
// next levels share the block's copy with shared atomics (compare-and-swap loops: their
// more texels keep retries rare), or go to global atomics (groups_shared_sums). H100, 40
// channels at 1024^2, 16 points a block at once: with only the block's copy the backward
// took 1434 us, ~460 of it in the compare-and-swap loops; with a copy per warp for the
// 1x1..4x4 levels (the RGBA kernel's __match_any_sync sums) 1278 us; a copy per slot 1130
// us, and 1008 us with the 8x8 level on global atomics. One kernel for both passes (with
// and without texel gradients), so that d/d uv and d/d lod are the same arithmetic, bit
// for bit, whether the image takes a gradient or not.
__global__ void __launch_bounds__(kBlock, 3)
    backward_groups_kernel(const __grid_constant__ Shape<float> shape, ChainLevels<const float> chain,
                           PointBatch<float> points, const float* grad_out, ChainLevels<float> grad, float* grad_uv,
                           float* grad_lod, BackwardPass pass, SharedSums shared, uint32_t* nonfinite) {
    extern __shared__ unsigned char shared_bytes[];
    float* sums = reinterpret_cast<float*>(shared_bytes);  // the slots' copies, then the block's
    const uint32_t slots = blockDim.x >> shape.lane_bits, slot = threadIdx.x >> shape.lane_bits;
    const uint32_t block_values = shared.block_values(), all_values = slots * shared.slot_values + block_values;
    for (uint32_t k = threadIdx.x; k < all_values; k += blockDim.x) sums[k] = 0;
    __shared__ Level levels[kMaxLevels];
    copy_levels(shape, levels);  // its barrier covers the sums' zeros too
    float* slot_sums = sums + slot * shared.slot_values;
    float* block_sums = sums + slots * shared.slot_values;
    const uint32_t channels = shape.channels, lane = threadIdx.x & (shape.lanes - 1), c = 4 * lane;
    const bool has_group = c < channels;
    const size_t step = size_t(gridDim.x) * slots;
    // The loop's bound is the same for every lane of a warp (points are whole lane groups
    // of one warp): all reach the shuffles.
    for (size_t first = size_t(blockIdx.x) * slots; first < points.count; first += step) {
        const size_t i = first + slot;
        const bool real = i < points.count;
        const auto [u, v, p, layer, go] =
            read_point(shape, points, grad_out, i, channels, c, has_group, pass.point_grads, nonfinite);
        float gu = 0, gv = 0, gl = 0;
        for (uint32_t k = 0; k < 2; ++k) {
            const uint32_t l = p.base + k;
            const bool present = real && has_group && (k == 0 || p.has_next);
            if (!present) continue;
            const bool scatter = l >= pass.first && l < pass.end;
            const Level& level = levels[l];
            const float weight = k == 0 ? 1 - p.blend : p.blend;
            const float4 gw = go * weight;
            const Bilinear<float> s = bilinear_at(level, u, v);
            // The texels for d/d uv and d/d lod read before the scatter, which hides their latency.
            Quad<float4> q{};
            if (pass.point_grads) q = quad_group_at(level_base(shape, levels, chain, l), level, layer, s, c);
            if (scatter && nonzero(gw)) {
                // Whole levels are summed in the slots' copies, the block's, or neither.
                const bool in_slot = level.offset >= shared.slot_first, in_block = !in_slot && level.offset >= shared.block_first;
                const auto tap = s.taps();
                const size_t level_first = level.offset + size_t(layer) * level.layer_stride + size_t(c) * level.channel;
                float* g = level_base(shape, levels, grad, l) + size_t(layer) * level.layer_stride;
#pragma unroll
                for (uint32_t j = 0; j < 4; ++j) {
                    const float4 value = gw * tap.weight[j];
                    const size_t element = level_first + tap.texel[j] * level.texel;
                    if (in_slot) {
                        float* at = slot_sums + (element - shared.slot_first);
                        at[0] += value.x;
                        at[level.channel] += value.y;
                        at[2 * level.channel] += value.z;
                        at[3 * level.channel] += value.w;
                    } else if (in_block) {
                        float* at = block_sums + (element - shared.block_first);
                        atomicAdd(at, value.x);
                        atomicAdd(at + level.channel, value.y);
                        atomicAdd(at + 2 * level.channel, value.z);
                        atomicAdd(at + 3 * level.channel, value.w);
                    } else {
                        add_group(g, level, tap.texel[j], value, c);
                    }
                }
            }
            if (!pass.point_grads) continue;
            gu += s.width * dot4(gw, (q.t10 - q.t00) * (1 - s.b) + (q.t11 - q.t01) * s.b);
            gv += s.height * dot4(gw, (q.t01 - q.t00) * (1 - s.a) + (q.t11 - q.t10) * s.a);
            if (p.free) gl += (k == 0 ? -1.f : 1.f) * dot4(go, blend_quad4(q, s));
        }
        if (!pass.point_grads) continue;  // the same for the whole grid
        for (uint32_t offset = shape.lanes / 2; offset > 0; offset /= 2) {  // the point's lanes' sums
            gu += __shfl_xor_sync(0xffffffffu, gu, offset);
            gv += __shfl_xor_sync(0xffffffffu, gv, offset);
            gl += __shfl_xor_sync(0xffffffffu, gl, offset);
        }
        if (real && lane == 0) store_point_grads(grad_uv, grad_lod, i, gu, gv, gl);
    }
    __syncthreads();
    for (uint32_t k = threadIdx.x; k < block_values + shared.slot_values; k += blockDim.x) {
        float sum = 0;
        if (k < block_values)
            sum = block_sums[k];
        else
            for (uint32_t w = 0; w < slots; ++w) sum += sums[w * shared.slot_values + (k - block_values)];
        if (sum != 0.f) atomicAdd(chain_element(shape, grad, shared.block_first + k), sum);
    }
}

// Level 0's texel gradients, added after the fold wrote level 0: a thread (or lanes) per
// point, and only points whose trilinear pair starts at level 0 (lod < 1) go on. As a pass
// of the strided kernels above it took 30-35 us at 4096^2 RGBA (H200) for the ~8% of points
// that scatter there: in their one-wave grid at 72 registers, every point's loads and
// weights were waited for in turn. Launched early: a point that scatters loads its data
// while the fold still runs, and awaits the fold only before its atomics.
template <class T, Channels kChannels>
__global__ void backward_level0_kernel(const __grid_constant__ Shape<T> shape, PointBatch<T> points, const T* grad_out,
                                       T* grad_level0) {
    const size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x, i = t >> shape.lane_bits;
    const LodPair<T> p = i < points.count ? lod_pair(shape.levels, points.lod[i]) : LodPair<T>{1, 0, false, false};
    if (p.base != 0) {
        await_previous_kernel();  // every thread: this grid ends after the fold, as stream order promises
        return;
    }
    const Level& level = shape.level[0];
    const T weight = 1 - p.blend;
    const Bilinear<T> s = bilinear_at(level, points.uv[2 * i], points.uv[2 * i + 1]);
    T* g = grad_level0 + size_t(layer_of(points, i, shape.layers)) * level.layer_stride;
    const auto tap = s.taps();
    if constexpr (kChannels == Channels::rgba && std::is_same_v<T, float>) {
        const float4 gw = reinterpret_cast<const float4*>(grad_out)[i] * weight;
        await_previous_kernel();
        if (!nonzero(gw)) return;
#pragma unroll
        for (uint32_t j = 0; j < 4; ++j) add_texel4(g, level, tap.texel[j], gw * tap.weight[j]);
    } else if constexpr (kChannels == Channels::groups && std::is_same_v<T, float>) {
        const uint32_t lane = uint32_t(t & (shape.lanes - 1));
        await_previous_kernel();
        for (uint32_t c = 4 * lane; c < shape.channels; c += 4 * shape.lanes) {
            const float4 gw = *reinterpret_cast<const float4*>(grad_out + i * shape.channels + c) * weight;
            if (!nonzero(gw)) continue;
#pragma unroll
            for (uint32_t j = 0; j < 4; ++j) add_group(g, level, tap.texel[j], gw * tap.weight[j], c);
        }
    } else {
        const uint32_t lane = uint32_t(t & (shape.lanes - 1));
        await_previous_kernel();
        for (uint32_t c = lane; c < shape.channels; c += shape.lanes) {
            const T gw = grad_out[i * shape.channels + c] * weight;
            if (gw == T(0)) continue;
#pragma unroll
            for (uint32_t j = 0; j < 4; ++j) atomicAdd(g + level.element(0, tap.texel[j], c), gw * tap.weight[j]);
        }
    }
}

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

}  // namespace

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
uint32_t coarsest_levels_from(const FeatureChainShape& shape, uint32_t first, uint32_t end, size_t room,
                              size_t max_texels) {
    uint32_t from = end;
    while (from > first && shape.offset(end) - shape.offset(from - 1) <= room &&
           shape.level_values(from - 1) / shape.channels <= max_texels)
        --from;
    return from;
}
std::pair<size_t, uint32_t> shared_levels(const FeatureChainShape& shape, uint32_t first, uint32_t end, size_t room,
                                          size_t max_texels) {
    const uint32_t from = coarsest_levels_from(shape, first, end, room, max_texels);
    return {shape.offset(from), static_cast<uint32_t>(shape.offset(end) - shape.offset(from))};
}

// The groups kernel's copies: the slots' (up to kGroupsSlotBytes) and the block's (the
// rest of kGroupsSharedBytes), above the 48 KB a kernel gets without opting in; three
// blocks an SM still fit. Where a warp holds at most 8 points (4 lanes a point or more),
// the block's copy takes only levels of fewer than kGroupsBlockTexels texels, where global
// atomics would queue on a few addresses: on larger ones the L2's vector atomics beat the
// copy's compare-and-swap loops. With 16 points a warp (8 channels) the copy takes every
// level that fits. H100, 1M points at 1024^2, backward with the limit and without it:
// 8 channels 351 / 279 us, 16: 424 / 451, 40: 1008 / 1130, 64: 1306 / 1321.
constexpr size_t kGroupsSharedBytes = 64 * 1024, kGroupsSlotBytes = 56 * 1024, kGroupsBlockTexels = 64;

SharedSums groups_shared_sums(const FeatureChainShape& shape, uint32_t lanes, uint32_t first, uint32_t end,
                              size_t max_texels) {
    const size_t slots = kBlock / lanes;
    const uint32_t slot_from =
        coarsest_levels_from(shape, first, end, kGroupsSlotBytes / (slots * sizeof(float)), max_texels);
    const size_t slot_values = shape.offset(end) - shape.offset(slot_from);
    const size_t block_texels = lanes >= 4 ? std::min(max_texels, kGroupsBlockTexels - 1) : max_texels;
    const uint32_t block_from = coarsest_levels_from(
        shape, first, slot_from, kGroupsSharedBytes / sizeof(float) - slots * slot_values, block_texels);
    return {shape.offset(block_from), shape.offset(slot_from), static_cast<uint32_t>(slot_values)};
}

template <class T>
void sample_points_backward(const FeatureChainShape& shape, ChainLevels<const T> chain, const PointBatch<T>& points,
                            const T* grad_out, ChainLevels<T> grad, T* grad_uv, T* grad_lod, cudaStream_t stream,
                            uint32_t* nonfinite) {
    check_feature_chain(shape);
    const bool coarse = shape.levels > 1, texture = grad.level0 != nullptr;
    if (!chain.level0 || (coarse && !chain.coarse) || (texture && coarse && !grad.coarse) ||
        (points.count && (!points.uv || !points.lod || !grad_out)))
        throw Error("the backward needs the chain, the points, the output gradient, and a coarse gradient buffer "
                    "where it has a gradient buffer for level 0");
    // Level 0's gradient is the image's: the largest buffer, so it is never zeroed nor read
    // back. The coarse levels gather their texel gradients first, the fold writes level 0
    // from them, then level 0's own texel gradients are added on top.
    if (texture && coarse) TVLM_CUDA_CHECK(cudaMemsetAsync(grad.coarse, 0, shape.coarse_values() * sizeof(T), stream));
    const Shape<T> d = device_shape<T>(shape);
    // Float channels in groups of 4 (float4 loads and vector atomics); RGBA: every point on
    // the float4 path, a copy of the shared levels per warp.
    const bool groups = groups4<T>(shape, {chain.level0, chain.coarse, grad.level0, grad.coarse, grad_out});
    const bool rgba = groups && shape.channels == 4;
    const void* kernel = rgba     ? reinterpret_cast<const void*>(backward_rgba_kernel)
                         : groups ? reinterpret_cast<const void*>(backward_groups_kernel)
                                  : reinterpret_cast<const void*>(backward_kernel<T>);
    const size_t copies = rgba ? kWarps : 1, room = (rgba ? kRgbaSharedBytes : kSharedBytes) / (copies * sizeof(T));
    const size_t most_shared = groups && !rgba ? kGroupsSharedBytes : room * copies * sizeof(T);
    // One wave: as many blocks as the multiprocessors hold at once (registers bound it: 3 of
    // 256 threads on sm_90), each striding over the points and adding its shared sums once.
    // A part wave costs: on an H100, 4 blocks per SM (1.33 waves) made the RGBA backward 60
    // us slower than 3 or 6; on an H200, 6 against 4 took it 699 -> 626 us.
    const unsigned blocks =
        std::min(blocks_for(points.count * d.lanes), resident_wave_blocks(kernel, int(kBlock), most_shared));
    // A level is summed in shared memory where it has at most a quarter as many texels as a
    // block has points: then the block's adds to it are likely to outnumber its texels, and
    // its flush costs fewer global atomics than it saves. H100, RGBA 4096^2: backward 398 ->
    // 391 us against every level that fits; a sixteenth sent 64-texel levels to global
    // atomics (+70 us).
    const size_t max_texels = points.count / std::max(blocks, 1u) / 4;
    const auto run = [&](BackwardPass pass) {
        if constexpr (std::is_same_v<T, float>) {
            if (groups && !rgba) {
                const SharedSums sums = groups_shared_sums(shape, d.lanes, pass.first, pass.end, max_texels);
                const size_t bytes = (kBlock / d.lanes * sums.slot_values + sums.block_values()) * sizeof(float);
                backward_groups_kernel<<<blocks, kBlock, bytes, stream>>>(d, chain, points, grad_out, grad, grad_uv,
                                                                          grad_lod, pass, sums, nonfinite);
                TVLM_CUDA_CHECK(cudaGetLastError());
                return;
            }
        }
        // The other kernels keep one range of levels in shared memory, a copy per warp (RGBA)
        // or per block.
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
        backward_kernel<T><<<blocks, kBlock, shared_bytes, stream>>>(
            d, chain, points, grad_out, grad, grad_uv, grad_lod, pass, shared_base, shared_values, nonfinite);
        TVLM_CUDA_CHECK(cudaGetLastError());
    };
    // A texture that takes no gradient (a model learning where to look in a fixed image):
    // d/d uv and d/d lod alone, one pass over the points that reads what the forward read,
    // with no zeroing, texel atomics or fold (H200, 1M points of a 4096^2 RGBA chain:
    // 54 us, where the backward with the texture's gradient takes 276).
    if (!texture) {
        if (points.count) run({0, 0, true});
        return;
    }
    if (points.count) run({1, shape.levels, true});
    fold_chain_gradient(shape, grad, stream, nonfinite);
    if (!points.count) return;
    // Level 0 summed in shared memory (a tiny texture under many points: global atomics on
    // its few texels would serialize) takes the strided kernel; otherwise the lean one.
    if (shared_levels(shape, 0, 1, room, max_texels).second != 0) return run({0, 1, false});
    const unsigned level0_blocks = blocks_for(points.count * d.lanes);
    if (rgba) {
        if constexpr (std::is_same_v<T, float>)
            launch_kernel_early(backward_level0_kernel<float, Channels::rgba>, dim3(level0_blocks), dim3(kBlock), stream,
                                true, d, points, grad_out, grad.level0);
    } else if (groups) {
        if constexpr (std::is_same_v<T, float>)
            launch_kernel_early(backward_level0_kernel<float, Channels::groups>, dim3(level0_blocks), dim3(kBlock), stream,
                                true, d, points, grad_out, grad.level0);
    } else {
        launch_kernel_early(backward_level0_kernel<T, Channels::each>, dim3(level0_blocks), dim3(kBlock), stream, true, d,
                            points, grad_out, grad.level0);
    }
}

#define TVLM_POINT_SAMPLING(T)                                                                                  \
    template void sample_points_forward<T>(const FeatureChainShape&, ChainLevels<const T>, const PointBatch<T>&, \
                                           T*, cudaStream_t);                                                    \
    template void sample_points_backward<T>(const FeatureChainShape&, ChainLevels<const T>, const PointBatch<T>&, \
                                            const T*, ChainLevels<T>, T*, T*, cudaStream_t, uint32_t*);
TVLM_POINT_SAMPLING(float)
TVLM_POINT_SAMPLING(double)

}  // namespace tvlm
