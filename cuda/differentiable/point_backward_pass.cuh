#pragma once
// What every point-sampling backward kernel shares: the pass it runs, where a point's
// gradients go, the room for shared-memory sums, and (float4 kernels) a point's reads.
// Included by point_backward.cu alone (its kernels' files).
#include "cuda/differentiable/point_taps.cuh"

namespace tvlm::point_kernels {

// Texel gradients of the coarsest levels (those that fit in kSharedBytes together, or the
// RGBA kernel's per-warp copies in kRgbaSharedBytes, and are small against the points a
// block takes: `sample_points_backward`) are summed in shared memory by each block first,
// then added to the chain once per block:
// with points anywhere, thousands land on the few texels of the 2x2 and 1x1 levels, and
// global atomics on one address serialize (with global atomics only, a backward of 1M
// points took milliseconds). Blocks stride over the points, so they are few.
constexpr size_t kSharedBytes = 32 * 1024;
// The RGBA kernel's copies of them, one per warp (48 KB: the most without opting in).
constexpr size_t kRgbaSharedBytes = 48 * 1024;

// d loss / d uv and d loss / d lod of point i, where the caller wants them.
template <class T>
__device__ void store_point_grads(T* grad_uv, T* grad_lod, size_t i, T gu, T gv, T gl) {
    if (grad_uv) {
        grad_uv[2 * i] = gu;
        grad_uv[2 * i + 1] = gv;
    }
    if (grad_lod) grad_lod[i] = gl;
}

// Element `index` of the chain's one index space in `grad`.
template <class T>
__device__ T* chain_element(const Shape<T>& shape, ChainLevels<T> grad, size_t index) {
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
inline __device__ PointRead read_point(const Shape<float>& shape, const PointBatch<float>& points,
                                       const float* grad_out, size_t i, uint32_t channels, uint32_t c, bool group,
                                       bool check, uint32_t* nonfinite) {
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

}  // namespace tvlm::point_kernels
