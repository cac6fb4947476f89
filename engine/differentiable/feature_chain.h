#pragma once
// The CPU reference of texturevlm's differentiable sampling, in double precision: the box
// mip chain of a C-channel float image (any C; the box of engine/mips/box_filter.h, exact for
// odd sizes) and its adjoint, which folds gradients that land on every level back into
// level 0. The oracle of the CUDA kernels (cuda/differentiable/point_sampling_grad.h); its own
// derivatives are checked against finite differences (tests/test_differentiable.cpp).
#include <cstdint>
#include <span>
#include <vector>

namespace tvlm {

// Level l of every layer: [layers, channels, height_l, width_l], row-major.
struct FeatureChain {
    uint32_t layers = 1, channels = 1, width = 0, height = 0;
    std::vector<std::vector<double>> levels;

    uint32_t level_width(uint32_t l) const { return width >> l ? width >> l : 1; }
    uint32_t level_height(uint32_t l) const { return height >> l ? height >> l : 1; }
    // Index of (layer, channel, x, y) in level l.
    size_t at(uint32_t l, uint32_t layer, uint32_t c, uint32_t x, uint32_t y) const {
        return ((size_t{layer} * channels + c) * level_height(l) + y) * level_width(l) + x;
    }
};

// The chain of `image` ([layers, channels, height, width]) down to `levels` levels (at most
// the full chain). Throws Error for empty sizes, too many levels or a wrong image size.
FeatureChain box_chain(std::span<const double> image, uint32_t layers, uint32_t channels, uint32_t width,
                       uint32_t height, uint32_t levels);

// d loss / d level 0, given d loss / d each level of `chain`'s shape (grads[l] sized like
// chain.levels[l]): each level's gradient goes back to the texels its box read, with the
// box's weights, from the coarsest level down, added to the gradient already there.
std::vector<double> box_chain_adjoint(const FeatureChain& chain, std::vector<std::vector<double>> grads);

}  // namespace tvlm
