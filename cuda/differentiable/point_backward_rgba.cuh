#pragma once
// The backward kernel for RGBA float texels: a thread per point, the small levels summed
// in a copy per warp.
#include "cuda/differentiable/point_backward_pass.cuh"

namespace tvlm::point_kernels {

// RGBA (float, 4 channels, 16-byte aligned buffers): a thread per point, a texel one
// float4 (four planes' values where level 0 is planar) and its gradient one vector atomic.
// The levels summed in shared memory have a copy per warp: the lanes that add to the same
// texel in one step are summed on one lane first (__match_any_sync), which adds to its
// warp's copy without atomics. Shared float atomics are compare-and-swap loops, and on the
// coarsest levels' few texels the lanes retried ~4.5 times per add: 40% of the pass's
// instructions.
constexpr uint32_t kWarps = kBlock / 32, kNotShared = ~0u;

inline __device__ float4 shuffle4(float4 v, int from) {
    return {__shfl_sync(0xffffffffu, v.x, from), __shfl_sync(0xffffffffu, v.y, from),
            __shfl_sync(0xffffffffu, v.z, from), __shfl_sync(0xffffffffu, v.w, from)};
}

// Warp-wide (every lane calls it): adds v to the warp's copy at element `at` (channels
// `stride` apart), or nothing for kNotShared.
inline __device__ void add_in_warp(float* warp_sums, uint32_t at, uint32_t stride, float4 v) {
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
        const auto [u, v, p, layer, go] = read_point(shape, points, grad_out, i, 4, 0, true, pass.point_grads,
                                                     nonfinite);
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
            // their latency (80 registers, still three blocks an SM).
            const bool grads = present && pass.point_grads;
            Quad<float4> q{};
            if (grads) q = quad4_at(level_base(shape, chain, l), level, layer, s);
            const bool warp_shares = __any_sync(0xffffffffu, in_shared);
#pragma unroll
            for (uint32_t j = 0; j < 4; ++j) {
                if (adds && !in_shared) add_texel4(g, level, tap.texel[j], gw * tap.weight[j]);
                if (warp_shares)
                    add_in_warp(
                        warp_sums,
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

}  // namespace tvlm::point_kernels
