#pragma once
// Trilinear point samples of a FeatureChain at explicit (u, v, lod) per point, forward and
// backward, in double: the definition the CUDA kernels (cuda/differentiable/point_sampling_grad.h) and
// the Python op texturevlm.sample_points follow. Bilinear within a level with
// clamp-to-edge addressing (texel centres at (i + 0.5) / size), linear between floor(lod)
// and the next level, lod clamped to [0, levels - 1] (what reference_trilinear does for
// textures). The derivative to lod is zero where it is clamped; at the kinks (texel
// centres, integer lods) the backward takes the one-sided derivative of the cell the point
// falls in.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/differentiable/feature_chain.h"

namespace tvlm {

// Point i: uv[2i], uv[2i+1], lod[i], in layer[i] (empty: layer 0 for all).
struct PointQuery {
    std::span<const double> uv, lod;
    std::span<const uint32_t> layer;
    size_t count() const { return lod.size(); }
};

// [points, channels]. Throws Error for mismatched sizes, layers outside the chain or
// non-finite positions.
std::vector<double> sample_points(const FeatureChain& chain, const PointQuery& points);

struct PointGradients {
    std::vector<std::vector<double>> levels;  // d loss / d each level, shaped like chain.levels
    std::vector<double> uv, lod;              // d loss / d each point's (u, v) and lod
};

// The gradients of a loss whose gradient to the samples is `grad_out` ([points, channels]).
// box_chain_adjoint(chain, result.levels) gives d loss / d the image.
PointGradients sample_points_backward(const FeatureChain& chain, const PointQuery& points,
                                      std::span<const double> grad_out);

}  // namespace tvlm
