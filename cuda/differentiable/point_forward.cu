// Differentiable point sampling on CUDA, the forward: a thread (or a few lanes) per point,
// the trilinear sample of the chain's levels in software, in T (why not the texture unit:
// docs/differentiable.md).
#include <type_traits>

#include "cuda/cuda_check.h"
#include "engine/error.h"
#include "cuda/min_blocks.cuh"
#include "cuda/differentiable/point_sampling_grad.h"
#include "cuda/differentiable/point_taps.cuh"

namespace tvlm {

namespace {

using namespace point_kernels;

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
        if (next != p.base)
            value = value * (1 - p.blend) + blend_quad4(quad4_at(hi_texels, hi_level, layer, hi), hi) * p.blend;
        reinterpret_cast<float4*>(out)[i] = value;
    } else if constexpr (kChannels == Channels::groups && std::is_same_v<T, float>) {
        for (uint32_t c = 4 * lane; c < shape.channels; c += 4 * shape.lanes) {
            float4 value = blend_quad4(quad_group_at(lo_texels, lo_level, layer, lo, c), lo);
            if (next != p.base)
                value = value * (1 - p.blend) +
                        blend_quad4(quad_group_at(hi_texels, hi_level, layer, hi, c), hi) * p.blend;
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
// allowed 85 nvcc keeps more of a point's loads in flight, which speeds up many channels.
// The same bound on the RGBA kernel made it slower, so this path has a kernel of its own.
__global__ void __launch_bounds__(kBlock, TVLM_MIN_BLOCKS(kBlock, 3))
    forward_groups_kernel(const __grid_constant__ Shape<float> shape, ChainLevels<const float> chain,
                          PointBatch<float> points, float* out) {
    forward_point<float, Channels::groups>(shape, chain, points, out);
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

template void sample_points_forward<float>(const FeatureChainShape&, ChainLevels<const float>, const PointBatch<float>&,
                                           float*, cudaStream_t);
template void sample_points_forward<double>(const FeatureChainShape&, ChainLevels<const double>,
                                            const PointBatch<double>&, double*, cudaStream_t);

}  // namespace tvlm
