#pragma once
// What the feature-chain kernels (feature_chain_build.cu, feature_chain_fold.cu) and the
// point-sampling kernels (point_forward.cu, point_backward.cu) share: a chain's levels as
// the device sees them, and float4 arithmetic. Internal to cuda/differentiable/.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/differentiable/point_sampling_grad.h"

namespace tvlm::feature_levels {

inline constexpr int kBlock = 256;
inline constexpr uint32_t kMaxLevels = 16;  // of a chain (check_feature_chain)

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
inline __device__ float4 operator*(float4 a, float k) { return {a.x * k, a.y * k, a.z * k, a.w * k}; }
inline __device__ float4 operator-(float4 a, float4 b) { return {a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w}; }
inline __device__ float4 operator+(float4 a, float4 b) { return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w}; }
inline __device__ float dot4(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
// Whether any channel is non-zero (a gradient worth scattering).
inline __device__ bool nonzero(float4 a) { return a.x != 0 || a.y != 0 || a.z != 0 || a.w != 0; }

// Level 0's folded gradient is non-finite exactly when some coarse gradient is (every
// coarse texel sends a positive share to level 0) or their sum overflowed: the fold checks
// what it writes, and the backward checks its upstream gradients, raising `nonfinite`
// (a NonFiniteFlag's word; null: not checked).
template <class T>
__device__ void raise_if_nonfinite(uint32_t* nonfinite, T value) {
    if (nonfinite && !isfinite(value)) *nonfinite = 1;
}

// Lanes per point in the sampling kernels: a power of two, about one per 4 channels (at
// most a warp), so a point's channels are read as one contiguous run of its texels
// (channels last) by neighbouring lanes, and its uv / lod gradients are summed with
// shuffles. Up to 4 channels one thread reads a texel's channels alone (they share a sector).
inline uint32_t lanes_for(uint32_t channels) {
    uint32_t lanes = 1;
    while (lanes * 4 < channels && lanes < 32) lanes *= 2;
    return lanes;
}

// A chain as the kernels see it (a kernel parameter: __grid_constant__).
template <class T>
struct Shape {
    uint32_t layers, channels, levels, lanes, lane_bits;
    size_t level0_values;
    Level level[kMaxLevels];
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
        d.level[l] = {s.level_width(l),    s.level_height(l),  s.offset(l), planar ? 1 : size_t{s.channels},
                      planar ? texels : 1, texels * s.channels};
    }
    return d;
}

// Level l's first element (host or device), its offset from `levels` (the shape's table,
// or a copy of it).
template <class T, class P>
__host__ __device__ P* level_base(const Shape<T>& shape, const Level* levels, ChainLevels<P> chain, uint32_t l) {
    return l == 0 ? chain.level0 : chain.coarse + (levels[l].offset - shape.level0_values);
}
template <class T, class P>
__host__ __device__ P* level_base(const Shape<T>& shape, ChainLevels<P> chain, uint32_t l) {
    return level_base(shape, shape.level, chain, l);
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

inline unsigned blocks_for(size_t threads) { return unsigned((threads + kBlock - 1) / kBlock); }

}  // namespace tvlm::feature_levels
