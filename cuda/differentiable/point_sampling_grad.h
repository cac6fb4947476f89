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

// A chain's levels 1.. are [layers, height_l, width_l, channels]: channels last, so that a
// texel's channels are one contiguous read and one run of atomics (planar channels cost a
// cache line per channel: 40-channel samples ran at 37x their floor). Level 0 lives apart
// and is the caller's image in place, planar ([layers, channels, height, width], torch's
// default) or channels last; the gradient's level 0 has the same layout, so it is the
// image's gradient as the caller holds the image (no copy in, none out). Levels are
// counted in one index space, level l from offset(l).
struct FeatureChainShape {
    uint32_t layers = 1, channels = 1, width = 0, height = 0, levels = 1;
    bool planar_level0 = false;  // level 0 (and its gradient) planar rather than channels last

    uint32_t level_width(uint32_t l) const { return width >> l ? width >> l : 1; }
    uint32_t level_height(uint32_t l) const { return height >> l ? height >> l : 1; }
    size_t level_values(uint32_t l) const { return size_t{layers} * channels * level_width(l) * level_height(l); }
    size_t offset(uint32_t l) const {
        size_t at = 0;
        for (uint32_t k = 0; k < l; ++k) at += level_values(k);
        return at;
    }
    size_t values() const { return offset(levels); }
    // Levels 1.. lie packed at ChainLevels::coarse: level l at offset(l) - level_values(0).
    size_t coarse_values() const { return values() - level_values(0); }
};

// Where a chain (or its gradient) lives: level 0 and the packed coarser levels.
template <class T>
struct ChainLevels {
    T* level0 = nullptr;
    T* coarse = nullptr;  // may be null for a one-level chain
};

// Throws Error for empty sizes, more than 64 channels or more levels than the image has.
void check_feature_chain(const FeatureChainShape& shape);

// The points: u, v interleaved (uv[2i], uv[2i+1]), lod[i], layer[i] (null: all layer 0).
template <class T>
struct PointBatch {
    const T* uv = nullptr;
    const T* lod = nullptr;
    const int32_t* layer = nullptr;
    size_t count = 0;
};

// Levels 1.. of the chain into `coarse` from level 0 (exact box of engine/mips/box_filter.h, in T).
template <class T>
void build_feature_chain(const FeatureChainShape& shape, const T* level0, T* coarse, cudaStream_t stream);

// out[i * channels + c]. A layer outside [0, layers) is clamped into it (checking indices
// that live on the device would need a host sync).
template <class T>
void sample_points_forward(const FeatureChainShape& shape, ChainLevels<const T> chain, const PointBatch<T>& points,
                           T* out, cudaStream_t stream);

// grad.level0 receives d loss / d image: every level's texel gradients folded into level 0
// through the chain's adjoint (nothing is read from it first: no zeroing needed);
// grad.coarse is scratch (its levels' gradients, changed by the fold). Both null: the
// texture takes no gradient, and only d/d uv and d/d lod are computed. grad_uv [2 * count]
// and grad_lod [count] are written (either may be null: not wanted). `nonfinite`
// (NonFiniteFlag::device_word, or null) is set to 1 when grad_out holds a NaN or an
// infinity: the values live on the device, so the verdict comes without a host sync.
template <class T>
void sample_points_backward(const FeatureChainShape& shape, ChainLevels<const T> chain, const PointBatch<T>& points,
                            const T* grad_out, ChainLevels<T> grad, T* grad_uv, T* grad_lod, cudaStream_t stream,
                            uint32_t* nonfinite = nullptr);

// Writes grad.level0 = what the gradient's coarse levels send back to level 0 through the
// box chain's adjoint (coarsest first; the coarse part is changed on the way; level 0 is
// written, not added to): d loss / d image for a loss of the coarse levels alone.
// `nonfinite` as above: set where the coarse gradient holds a NaN or infinity (or the
// folded sum overflows).
template <class T>
void fold_chain_gradient(const FeatureChainShape& shape, ChainLevels<T> grad, cudaStream_t stream,
                         uint32_t* nonfinite = nullptr);

// Patches of P x P samples placed by metadata rows [images, patches, 5] of (cu, cv, su, sv,
// lod), the layouts' metadata (glimpse.sample_patches): sample (j, k) of a row at
// u = cu + ((j + 0.5) / P - 0.5) * su, v = cv + ((k + 0.5) / P - 0.5) * sv, level lod, layer
// its image. Points are numbered (image, patch, k, j), j fastest.
struct PatchGrid {
    uint32_t images = 0, patches = 0, patch_size = 0;
    size_t points() const { return size_t{images} * patches * patch_size * patch_size; }
};

// The grid's points (uv [2 * points], lod, layer [points]) from meta [images * patches * 5].
template <class T>
void patch_grid_points(const T* meta, const PatchGrid& grid, T* uv, T* lod, int32_t* layer, cudaStream_t stream);

// d loss / d meta [images * patches * 5] from d loss / d the points' uv and lod.
template <class T>
void patch_grid_adjoint(const T* grad_uv, const T* grad_lod, const PatchGrid& grid, T* grad_meta, cudaStream_t stream);

// The patches' gradient as sample_patches returns its patches, planar ([images * patches,
// channels, P, P]), into the points' order with channels last ([points, channels]), what
// sample_points_backward reads: so the backward takes autograd's gradient as it comes,
// without a copy of its own on the host's side.
template <class T>
void patch_grad_channels_last(const T* planar, const PatchGrid& grid, uint32_t channels, T* last, cudaStream_t stream);

}  // namespace tvlm
