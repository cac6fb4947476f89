#pragma once
// Differentiable trilinear point sampling on CUDA, in software (float32 or float64), with
// the definition of the CPU reference (engine/differentiable/point_sampling.h): a chain of
// C-channel levels in device memory, samples at explicit (u, v, lod), and the backward to
// every level, to (u, v) and to lod, then the chain's adjoint that folds the levels'
// gradients into level 0. Software filtering because the texture unit's 8-bit blend
// weights would make the forward disagree with the backward's exact weights (see
// docs/differentiable.md for the size of that mismatch). Stream-ordered, no host sync,
// no allocation: callers own every buffer.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tvlm {

// Level l of every layer lies at chain + offset(l): [layers, channels, h_l, w_l].
struct FeatureChainShape {
    uint32_t layers = 1, channels = 1, width = 0, height = 0, levels = 1;

    uint32_t level_width(uint32_t l) const { return width >> l ? width >> l : 1; }
    uint32_t level_height(uint32_t l) const { return height >> l ? height >> l : 1; }
    size_t level_values(uint32_t l) const { return size_t{layers} * channels * level_width(l) * level_height(l); }
    size_t offset(uint32_t l) const {
        size_t at = 0;
        for (uint32_t k = 0; k < l; ++k) at += level_values(k);
        return at;
    }
    size_t values() const { return offset(levels); }
};

// Throws Error for empty sizes, more than 64 channels or more levels than the image has.
void check_feature_chain(const FeatureChainShape& shape);

// The points: u, v interleaved (uv[2i], uv[2i+1]), lod[i], layer[i] (null: all layer 0).
template <class T> struct PointBatch {
    const T* uv = nullptr;
    const T* lod = nullptr;
    const int32_t* layer = nullptr;
    size_t count = 0;
};

// Levels 1.. of `chain` from its level 0 (exact box of engine/box_filter.h, in T).
template <class T> void build_feature_chain(const FeatureChainShape& shape, T* chain, cudaStream_t stream);

// out[i * channels + c]. A layer outside [0, layers) is clamped into it (checking indices
// that live on the device would need a host sync).
template <class T>
void sample_points_forward(const FeatureChainShape& shape, const T* chain, const PointBatch<T>& points, T* out,
                           cudaStream_t stream);

// grad_chain (shape.values(), zeroed here) receives d loss / d every level; grad_uv
// [2 * count] and grad_lod [count] are written (either may be null: not wanted).
template <class T>
void sample_points_backward(const FeatureChainShape& shape, const T* chain, const PointBatch<T>& points,
                            const T* grad_out, T* grad_chain, T* grad_uv, T* grad_lod, cudaStream_t stream);

// Folds grad_chain's levels into its level 0 (the box chain's adjoint, coarsest first):
// afterwards grad_chain[0 .. level_values(0)) is d loss / d the image.
template <class T> void fold_chain_gradient(const FeatureChainShape& shape, T* grad_chain, cudaStream_t stream);

}  // namespace tvlm
