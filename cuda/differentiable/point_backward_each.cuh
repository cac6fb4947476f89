#pragma once
// The backward kernel for channels one by one: any T and channel count.
#include "cuda/differentiable/point_backward_pass.cuh"

namespace tvlm::point_kernels {

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
                    if (level.offset + element >= shared_base)
                        atomicAdd(sums + (level.offset + element - shared_base), value);
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
        if (!pass.point_grads) continue;                              // the same for the whole grid
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

}  // namespace tvlm::point_kernels
