#pragma once
// What the point-sampling kernels (point_forward.cu, point_backward.cu) share: a sample's
// bilinear taps and level pair, and a texel's values read and gradients added, channel by
// channel, as RGBA float4s, or as float4 groups of channels. The arithmetic of
// engine/differentiable/ in T. Internal to cuda/differentiable/.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "cuda/differentiable/feature_levels.cuh"

namespace tvlm::point_kernels {

using namespace feature_levels;

// A bilinear sample's texels (indices in a layer's plane of texels) and weights in one
// level, clamp to edge.
template <class T>
struct Bilinear {
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
inline __device__ Bilinear<T> bilinear_at(const Level& level, T u, T v) {
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

template <class T>
struct LodPair {
    uint32_t base;
    T blend;
    bool has_next, free;
};

template <class T>
inline __device__ LodPair<T> lod_pair(uint32_t levels, T lod) {
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
template <class T>
struct Quad {
    T t00, t10, t01, t11;
};
template <class T>
inline __device__ Quad<T> quad_at(const T* plane, const Level& level, const Bilinear<T>& s) {
    return {plane[s.i00 * level.texel], plane[s.i10 * level.texel], plane[s.i01 * level.texel],
            plane[s.i11 * level.texel]};
}
template <class T>
inline __device__ T blend_quad(const Quad<T>& q, const Bilinear<T>& s) {
    return (1 - s.b) * ((1 - s.a) * q.t00 + s.a * q.t10) + s.b * ((1 - s.a) * q.t01 + s.a * q.t11);
}

template <class T>
inline __device__ uint32_t layer_of(const PointBatch<T>& points, size_t i, uint32_t layers) {
    if (!points.layer) return 0;
    return uint32_t(min(max(points.layer[i], 0), int32_t(layers) - 1));
}

// The level table in shared memory, copied there by each block (every thread calls it).
// The lanes of a warp read different levels, and a kernel parameter read at an index that
// differs across a warp is served one index at a time by the constant cache. The copy
// speeds up the many-channel backward; the RGBA backward and the forward keep the parameter
// (the copy made the RGBA backward slower).
template <class T>
__device__ void copy_levels(const Shape<T>& shape, Level* levels) {
    if (threadIdx.x < shape.levels) levels[threadIdx.x] = shape.level[threadIdx.x];
    __syncthreads();
}

// RGBA levels (4 channels, 16-byte aligned: `texel4` below): a texel is one float4, read
// with one load and its gradient added with one vector atomic (sm_90 has them for global
// memory) where the level is channels last: a quarter of the instructions and atomics of
// the scalar path. A planar level 0 (torch's layout) gives its texels as float4 too, four
// planes read: every point of a warp then takes the same path (with level 0 on the scalar
// path, the few points below lod 1 made every warp run both, nearly doubling the forward).
inline __device__ void atomic_add4(float4* at, float4 v) {
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
// code measured here); group_at's instead made no difference beyond run-to-run spread.
inline __device__ float4 texel4_at(const float* in_layer, const Level& level, size_t i) {
    if (level.texel == 4) return reinterpret_cast<const float4*>(in_layer)[i];
    const float* t = in_layer + i;
    return {t[0], t[level.channel], t[2 * level.channel], t[3 * level.channel]};
}
inline __device__ void add_texel4(float* in_layer, const Level& level, size_t i, float4 v) {
    if (level.texel == 4) return atomic_add4(reinterpret_cast<float4*>(in_layer) + i, v);
    float* t = in_layer + i;
    atomicAdd(t, v.x);
    atomicAdd(t + level.channel, v.y);
    atomicAdd(t + 2 * level.channel, v.z);
    atomicAdd(t + 3 * level.channel, v.w);
}
inline __device__ Quad<float4> quad4_at(const float* texels, const Level& level, uint32_t layer,
                                        const Bilinear<float>& s) {
    const float* t = texels + size_t(layer) * level.layer_stride;
    return {texel4_at(t, level, s.i00), texel4_at(t, level, s.i10), texel4_at(t, level, s.i01),
            texel4_at(t, level, s.i11)};
}
// Channels c..c+3 of texel i of a layer (`in_layer`: the layer's element 0): one float4
// where the level is channels last (4 | channels, 16-byte aligned buffers), four planes'
// values where it is planar.
inline __device__ float4 group_at(const float* in_layer, const Level& level, size_t i, uint32_t c) {
    const float* t = in_layer + i * level.texel + size_t(c) * level.channel;
    if (level.channel == 1) return *reinterpret_cast<const float4*>(t);
    return {t[0], t[level.channel], t[2 * level.channel], t[3 * level.channel]};
}
inline __device__ void add_group(float* in_layer, const Level& level, size_t i, float4 v, uint32_t c) {
    float* t = in_layer + i * level.texel + size_t(c) * level.channel;
    if (level.channel == 1) return atomic_add4(reinterpret_cast<float4*>(t), v);
    atomicAdd(t, v.x);
    atomicAdd(t + level.channel, v.y);
    atomicAdd(t + 2 * level.channel, v.z);
    atomicAdd(t + 3 * level.channel, v.w);
}
inline __device__ Quad<float4> quad_group_at(const float* texels, const Level& level, uint32_t layer,
                                             const Bilinear<float>& s, uint32_t c) {
    const float* t = texels + size_t(layer) * level.layer_stride;
    return {group_at(t, level, s.i00, c), group_at(t, level, s.i10, c), group_at(t, level, s.i01, c),
            group_at(t, level, s.i11, c)};
}
inline __device__ float4 blend_quad4(const Quad<float4>& q, const Bilinear<float>& s) {
    return (q.t00 * (1 - s.a) + q.t10 * s.a) * (1 - s.b) + (q.t01 * (1 - s.a) + q.t11 * s.a) * s.b;
}

// How a kernel takes a point's channels: one by one (any T and count), in float4 groups
// (float, 4 | channels, 16-byte aligned buffers: a texel's group is one load), or RGBA (one
// group: one thread per point). A template argument, so that each path's kernel carries
// only its own registers: the 40-channel job ran 1.3x slower with the scalar and RGBA
// paths in one kernel, and the RGBA kernel slower with the group loop beside it.
enum class Channels { each, groups, rgba };

// Whether the kernels may take channels in float4 groups (RGBA: a texel) for these buffers.
template <class T>
bool groups4(const FeatureChainShape& shape, std::initializer_list<const void*> buffers) {
    if constexpr (!std::is_same_v<T, float>) {
        return false;
    } else {
        if (shape.channels % 4 != 0) return false;
        for (const void* b : buffers)
            if (!aligned16(b)) return false;
        return true;
    }
}

}  // namespace tvlm::point_kernels
