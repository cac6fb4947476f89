#pragma once
// Level 0's texel gradients, the backward's last kernel (after the fold writes level 0).
#include "cuda/early_launch.cuh"
#include "cuda/differentiable/point_taps.cuh"

namespace tvlm::point_kernels {

// Level 0's texel gradients, added after the fold wrote level 0: a thread (or lanes) per
// point, and only points whose trilinear pair starts at level 0 (lod < 1) go on. As a pass
// of the strided kernels (point_backward_*.cuh) it took long for the few points that
// scatter there: in their one-wave grid at 72 registers, every
// point's loads and weights were waited for in turn. Launched early: a point that scatters
// loads its data while the fold still runs, and awaits the fold only before its atomics.
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

}  // namespace tvlm::point_kernels
