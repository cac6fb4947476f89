#include "engine/differentiable/feature_chain.h"

#include <bit>
#include <string>

#include "engine/mips/box_filter.h"
#include "engine/error.h"

namespace tvlm {

FeatureChain box_chain(std::span<const double> image, uint32_t layers, uint32_t channels, uint32_t width,
                       uint32_t height, uint32_t levels) {
    if (layers == 0 || channels == 0 || width == 0 || height == 0)
        throw Error("a feature image needs positive layers, channels, width and height");
    const uint32_t full = static_cast<uint32_t>(std::bit_width(std::max(width, height)));
    if (levels == 0 || levels > full)
        throw Error("a " + std::to_string(width) + "x" + std::to_string(height) + " image has 1.." +
                    std::to_string(full) + " levels, not " + std::to_string(levels));
    FeatureChain chain{layers, channels, width, height, {}};
    if (image.size() != size_t{layers} * channels * width * height)
        throw Error("the image has " + std::to_string(image.size()) + " values, its shape needs " +
                    std::to_string(size_t{layers} * channels * width * height));
    chain.levels.emplace_back(image.begin(), image.end());
    for (uint32_t l = 1; l < levels; ++l) {
        const uint32_t sw = chain.level_width(l - 1), sh = chain.level_height(l - 1);
        const uint32_t w = chain.level_width(l), h = chain.level_height(l);
        std::vector<double> level(size_t{layers} * channels * w * h);
        for (uint32_t b = 0; b < layers; ++b)
            for (uint32_t c = 0; c < channels; ++c)
                for (uint32_t y = 0; y < h; ++y)
                    for (uint32_t x = 0; x < w; ++x) {
                        const BoxTaps tx = box_taps(x, sw), ty = box_taps(y, sh);
                        double n = 0;
                        for (uint32_t j = 0; j < ty.count; ++j)
                            for (uint32_t i = 0; i < tx.count; ++i)
                                n += double(tx.weight[i]) * ty.weight[j] *
                                     chain.levels[l - 1][chain.at(l - 1, b, c, tx.first + i, ty.first + j)];
                        level[chain.at(l, b, c, x, y)] = n / (double(tx.sum) * ty.sum);
                    }
        chain.levels.push_back(std::move(level));
    }
    return chain;
}

std::vector<double> box_chain_adjoint(const FeatureChain& chain, std::vector<std::vector<double>> grads) {
    if (grads.size() != chain.levels.size()) throw Error("one gradient per level of the chain");
    for (size_t l = 0; l < grads.size(); ++l)
        if (grads[l].size() != chain.levels[l].size()) throw Error("a level's gradient is not the level's size");
    for (uint32_t l = static_cast<uint32_t>(grads.size()) - 1; l >= 1; --l) {
        const uint32_t sw = chain.level_width(l - 1), sh = chain.level_height(l - 1);
        for (uint32_t b = 0; b < chain.layers; ++b)
            for (uint32_t c = 0; c < chain.channels; ++c)
                for (uint32_t y = 0; y < chain.level_height(l); ++y)
                    for (uint32_t x = 0; x < chain.level_width(l); ++x) {
                        const double g = grads[l][chain.at(l, b, c, x, y)];
                        const BoxTaps tx = box_taps(x, sw), ty = box_taps(y, sh);
                        const double d = double(tx.sum) * ty.sum;
                        for (uint32_t j = 0; j < ty.count; ++j)
                            for (uint32_t i = 0; i < tx.count; ++i)
                                grads[l - 1][chain.at(l - 1, b, c, tx.first + i, ty.first + j)] += g * tx.weight[i] *
                                                                                                   ty.weight[j] / d;
                    }
    }
    return std::move(grads[0]);
}

}  // namespace tvlm
