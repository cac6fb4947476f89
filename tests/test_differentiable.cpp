// The differentiable sampling reference (engine/differentiable/) against finite
// differences in double: gradients to every texel of level 0 (through the box chain's
// adjoint), to each point's (u, v) and to its lod, for odd sizes, layers and C = 1, 3, 4, 40.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/differentiable/feature_chain.h"
#include "engine/differentiable/point_sampling.h"
#include "engine/error.h"

using namespace tvlm;

namespace {

struct Job {
    uint32_t layers, channels, width, height, levels;
    std::vector<double> image, uv, lod, weights;
    std::vector<uint32_t> layer;
};

Job random_job(uint32_t layers, uint32_t channels, uint32_t width, uint32_t height, uint32_t levels, size_t points,
               uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    Job j{layers, channels, width, height, levels, {}, {}, {}, {}, {}};
    j.image.resize(size_t{layers} * channels * width * height);
    for (double& v : j.image) v = unit(rng);
    for (size_t i = 0; i < points; ++i) {
        j.uv.push_back(unit(rng) * 1.2 - 0.1);  // some outside [0, 1]: clamped edges
        j.uv.push_back(unit(rng) * 1.2 - 0.1);
        j.lod.push_back(unit(rng) * (levels + 0.6) - 0.3);  // some clamped at both ends
        j.layer.push_back(uint32_t(rng() % layers));
    }
    j.weights.resize(points * channels);
    for (double& w : j.weights) w = unit(rng) * 2 - 1;
    return j;
}

// loss = sum of weights * samples
double loss(const Job& j, std::span<const double> image, std::span<const double> uv, std::span<const double> lod) {
    const FeatureChain chain = box_chain(image, j.layers, j.channels, j.width, j.height, j.levels);
    const std::vector<double> out = sample_points(chain, {uv, lod, j.layer});
    double sum = 0;
    for (size_t i = 0; i < out.size(); ++i) sum += out[i] * j.weights[i];
    return sum;
}

// Central difference of loss along one value of `values` (a copy of one of the job's inputs).
template <class Eval>
double central_difference(std::vector<double> values, size_t i, Eval eval) {
    const double eps = 1e-6, x = values[i];
    values[i] = x + eps;
    const double up = eval(values);
    values[i] = x - eps;
    return (up - eval(values)) / (2 * eps);
}

void check_gradients(const Job& j) {
    const FeatureChain chain = box_chain(j.image, j.layers, j.channels, j.width, j.height, j.levels);
    const PointQuery query{j.uv, j.lod, j.layer};
    PointGradients g = sample_points_backward(chain, query, j.weights);
    const std::vector<double> image_grad = box_chain_adjoint(chain, std::move(g.levels));
    REQUIRE(image_grad.size() == j.image.size());
    // Every texel of small images, a seeded subset of large ones.
    const size_t step = j.image.size() > 600 ? j.image.size() / 300 + 1 : 1;
    for (size_t i = 0; i < j.image.size(); i += step) {
        const double fd = central_difference(j.image, i,
                                             [&](const std::vector<double>& v) { return loss(j, v, j.uv, j.lod); });
        CHECK_MESSAGE(std::abs(image_grad[i] - fd) <= 1e-6 * (1 + std::abs(fd)), "texel ", i);
    }
    for (size_t i = 0; i < j.uv.size(); ++i) {
        const double fd = central_difference(j.uv, i,
                                             [&](const std::vector<double>& v) { return loss(j, j.image, v, j.lod); });
        CHECK_MESSAGE(std::abs(g.uv[i] - fd) <= 1e-5 * (1 + std::abs(fd)), "uv ", i);
    }
    for (size_t i = 0; i < j.lod.size(); ++i) {
        const double fd = central_difference(j.lod, i,
                                             [&](const std::vector<double>& v) { return loss(j, j.image, j.uv, v); });
        CHECK_MESSAGE(std::abs(g.lod[i] - fd) <= 1e-6 * (1 + std::abs(fd)), "lod ", i);
    }
}

}  // namespace

TEST_CASE("differentiable reference: gradients to texels, uv and lod equal finite differences") {
    for (uint32_t channels : {1u, 3u, 4u, 40u}) {
        CAPTURE(channels);
        check_gradients(random_job(2, channels, 13, 9, 4, 24, 7 + channels));   // odd sizes, 2 layers
        check_gradients(random_job(1, channels, 16, 8, 5, 16, 11 + channels));  // even sizes, the full chain
    }
    check_gradients(random_job(3, 2, 1, 7, 3, 12, 3));  // one texel wide
}

TEST_CASE("differentiable reference: the chain's adjoint is the transpose of the box") {
    // <box(x), y> == <x, adjoint(y)> for random x and per-level y.
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    std::vector<double> x(2 * 3 * 11 * 6);
    for (double& v : x) v = unit(rng);
    const FeatureChain chain = box_chain(x, 2, 3, 11, 6, 4);
    std::vector<std::vector<double>> y;
    double forward = 0;
    for (const auto& level : chain.levels) {
        y.emplace_back(level.size());
        for (size_t i = 0; i < level.size(); ++i) {
            y.back()[i] = unit(rng);
            forward += level[i] * y.back()[i];
        }
    }
    const std::vector<double> back = box_chain_adjoint(chain, y);
    double adjoint = 0;
    for (size_t i = 0; i < x.size(); ++i) adjoint += x[i] * back[i];
    CHECK(forward == doctest::Approx(adjoint).epsilon(1e-12));
}

TEST_CASE("differentiable reference: bad input is refused") {
    const std::vector<double> image(3 * 4 * 4, 0.5);
    CHECK_THROWS_WITH_AS(box_chain(image, 1, 3, 4, 4, 4), doctest::Contains("1..3 levels"), Error);
    CHECK_THROWS_WITH_AS(box_chain(image, 1, 3, 4, 5, 2), doctest::Contains("values"), Error);
    CHECK_THROWS_AS(box_chain(image, 1, 0, 4, 4, 1), Error);
    const FeatureChain chain = box_chain(image, 1, 3, 4, 4, 3);
    const std::vector<double> uv{0.5, 0.5}, lod{0.0}, nan_lod{std::nan("")};
    const std::vector<uint32_t> far_layer{1};
    CHECK_THROWS_WITH_AS(sample_points(chain, {uv, nan_lod, {}}), doctest::Contains("non-finite"), Error);
    CHECK_THROWS_WITH_AS(sample_points(chain, {uv, lod, far_layer}), doctest::Contains("layer 1 of 1"), Error);
    CHECK_THROWS_WITH_AS(sample_points(chain, {std::span(uv).first(1), lod, {}}), doctest::Contains("two values"),
                         Error);
    const std::vector<double> short_grad(2);
    CHECK_THROWS_WITH_AS(sample_points_backward(chain, {uv, lod, {}}, short_grad),
                         doctest::Contains("[points, channels]"), Error);
}
