// CUDA differentiable point sampling (cuda/differentiable/point_sampling_grad.h) against the double CPU
// reference (engine/differentiable/): the chain, the samples, the gradients to every level
// folded into level 0, to uv and to lod; float64 to 1e-10, float32 within its rounding.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "engine/differentiable/feature_chain.h"
#include "engine/differentiable/point_sampling.h"
#include "engine/error.h"
#include "cuda/nonfinite_flag.h"
#include "cuda/differentiable/point_sampling_grad.h"

using namespace tvlm;

namespace {

template <class T>
DeviceBuffer<T> upload(const std::vector<double>& values, size_t room = 0) {
    std::vector<T> host(values.begin(), values.end());
    DeviceBuffer<T> buffer(std::max(room, host.size()));
    TVLM_CUDA_CHECK(cudaMemcpy(buffer.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    return buffer;
}

template <class T>
std::vector<double> download(const T* data, size_t count) {
    std::vector<T> host(count);
    TVLM_CUDA_CHECK(cudaMemcpy(host.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost));
    return {host.begin(), host.end()};
}

// [layers, channels, height, width] (the reference's planes) as [layers, height, width,
// channels] (the kernels' channels-last levels).
std::vector<double> channels_last(const std::vector<double>& planes, uint32_t layers, uint32_t channels, uint32_t width,
                                  uint32_t height) {
    std::vector<double> out(planes.size());
    for (uint32_t b = 0; b < layers; ++b)
        for (uint32_t c = 0; c < channels; ++c)
            for (size_t t = 0; t < size_t{width} * height; ++t)
                out[(size_t{b} * width * height + t) * channels + c] =
                    planes[(size_t{b} * channels + c) * width * height + t];
    return out;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tolerance, const char* what) {
    REQUIRE(got.size() == want.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, std::abs(got[i] - want[i]) / (1 + std::abs(want[i])));
    INFO(what, ": worst relative difference ", worst);
    CHECK(worst <= tolerance);
}

template <class T>
void check_against_reference(uint32_t layers, uint32_t channels, uint32_t width, uint32_t height, uint32_t levels,
                             size_t count, double tolerance, bool planar_level0 = false) {
    CAPTURE(channels);
    CAPTURE(planar_level0);
    std::mt19937 rng(channels * 31 + width);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<double> image(size_t{layers} * channels * width * height), uv, lod, grad_out(count * channels);
    std::vector<uint32_t> layer;
    std::vector<int32_t> device_layer;
    for (double& v : image) v = unit(rng);
    for (size_t i = 0; i < count; ++i) {
        uv.push_back(unit(rng) * 1.2 - 0.1);
        uv.push_back(unit(rng) * 1.2 - 0.1);
        lod.push_back(unit(rng) * (levels + 0.6) - 0.3);
        layer.push_back(uint32_t(rng() % layers));
        device_layer.push_back(int32_t(layer.back()));
    }
    for (double& g : grad_out) g = unit(rng) * 2 - 1;
    // The reference, in double.
    const FeatureChain chain = box_chain(image, layers, channels, width, height, levels);
    const PointQuery query{uv, lod, layer};
    const std::vector<double> want = sample_points(chain, query);
    PointGradients want_grad = sample_points_backward(chain, query, grad_out);
    const std::vector<double> want_image_grad = box_chain_adjoint(chain, std::move(want_grad.levels));
    // CUDA, in T: level 0 (planar or channels last) and the coarse levels (channels last) apart.
    const FeatureChainShape shape{layers, channels, width, height, levels, planar_level0};
    const auto last = [&](const std::vector<double>& planes, uint32_t l) {
        return l == 0 && planar_level0
                   ? planes
                   : channels_last(planes, layers, channels, shape.level_width(l), shape.level_height(l));
    };
    DeviceBuffer<T> d_image = upload<T>(last(image, 0));
    DeviceBuffer<T> d_coarse(std::max<size_t>(shape.coarse_values(), 1)),
        d_grad_coarse(std::max<size_t>(shape.coarse_values(), 1));
    DeviceBuffer<T> d_uv = upload<T>(uv), d_lod = upload<T>(lod), d_grad_out = upload<T>(grad_out);
    DeviceBuffer<int32_t> d_layer(count);
    TVLM_CUDA_CHECK(cudaMemcpy(d_layer.data(), device_layer.data(), count * sizeof(int32_t), cudaMemcpyHostToDevice));
    DeviceBuffer<T> d_out(count * channels), d_grad_image(shape.level_values(0)), d_grad_uv(2 * count),
        d_grad_lod(count);
    TVLM_CUDA_CHECK(cudaMemset(d_out.data(), 0xFF, d_out.bytes()));  // poison: NaN
    TVLM_CUDA_CHECK(cudaMemset(d_grad_image.data(), 0xFF, d_grad_image.bytes()));
    TVLM_CUDA_CHECK(cudaMemset(d_coarse.data(), 0xFF, d_coarse.bytes()));            // every level written
    TVLM_CUDA_CHECK(cudaMemset(d_grad_coarse.data(), 0xFF, d_grad_coarse.bytes()));  // the backward zeroes it
    build_feature_chain<T>(shape, d_image.data(), d_coarse.data(), nullptr);
    const PointBatch<T> points{d_uv.data(), d_lod.data(), d_layer.data(), count};
    const ChainLevels<const T> chain_levels{d_image.data(), d_coarse.data()};
    const ChainLevels<T> grad_levels{d_grad_image.data(), d_grad_coarse.data()};
    sample_points_forward<T>(shape, chain_levels, points, d_out.data(), nullptr);
    NonFiniteFlag nonfinite;
    sample_points_backward<T>(shape, chain_levels, points, d_grad_out.data(), grad_levels, d_grad_uv.data(),
                              d_grad_lod.data(), nullptr, nonfinite.device_word());
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK_FALSE(nonfinite.take());  // finite gradients raise nothing
    for (uint32_t l = 1; l < levels; ++l)
        check_close(download(d_coarse.data() + shape.offset(l) - shape.level_values(0), shape.level_values(l)),
                    last(chain.levels[l], l), tolerance, "chain level");
    check_close(download(d_out.data(), count * channels), want, tolerance, "samples");
    check_close(download(d_grad_image.data(), shape.level_values(0)), last(want_image_grad, 0), tolerance,
                "d loss / d image");
    // uv gradients scale with the level's size: compare relative to it.
    check_close(download(d_grad_uv.data(), 2 * count), want_grad.uv, tolerance * width * channels, "d loss / d uv");
    check_close(download(d_grad_lod.data(), count), want_grad.lod, tolerance * channels, "d loss / d lod");
    // A texture that takes no gradient: d/d uv and d/d lod alone, as above.
    TVLM_CUDA_CHECK(cudaMemset(d_grad_uv.data(), 0xFF, d_grad_uv.bytes()));
    TVLM_CUDA_CHECK(cudaMemset(d_grad_lod.data(), 0xFF, d_grad_lod.bytes()));
    sample_points_backward<T>(shape, chain_levels, points, d_grad_out.data(), ChainLevels<T>{}, d_grad_uv.data(),
                              d_grad_lod.data(), nullptr, nonfinite.device_word());
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK_FALSE(nonfinite.take());
    check_close(download(d_grad_uv.data(), 2 * count), want_grad.uv, tolerance * width * channels,
                "d loss / d uv, the texture taking no gradient");
    check_close(download(d_grad_lod.data(), count), want_grad.lod, tolerance * channels,
                "d loss / d lod, the texture taking no gradient");
}

}  // namespace

TEST_CASE("CUDA differentiable point samples equal the double reference: values, image, uv and lod gradients") {
    for (uint32_t channels : {1u, 3u, 4u, 40u}) {
        for (bool planar : {false, true}) {  // level 0 as the caller's image is laid out
            check_against_reference<double>(2, channels, 37, 21, 6, 500, 1e-10,
                                            planar);  // odd sizes, layers, full chain
            check_against_reference<float>(2, channels, 37, 21, 6, 500, 2e-5, planar);
        }
    }
    check_against_reference<double>(3, 5, 64, 48, 7, 3000, 1e-10, true);  // even sides: the 2:1 paths
    // Enough points that the float groups kernel sums levels in every place it has: a copy
    // per point slot (1x1, 2x2), the block's copy (4x4), global atomics (8x8 and finer),
    // with 16 points a warp (8 channels) and 2 (64 channels).
    check_against_reference<float>(1, 8, 64, 64, 7, 40000, 1e-4);
    check_against_reference<float>(1, 64, 64, 64, 7, 40000, 1e-4);
    check_against_reference<float>(2, 3, 37, 21, 1, 500, 2e-5, true);  // level 0 alone: nothing to fold
    // Level 0 written in one pass from the levels that halve: 3 of them, 2 (12x20 -> 6x10
    // -> 3x5) and 1 (a two-level chain); float4 texel groups (channels last, 4 | channels).
    check_against_reference<float>(2, 4, 32, 16, 5, 800, 2e-5, true);
    check_against_reference<float>(2, 4, 12, 20, 4, 600, 2e-5);
    check_against_reference<double>(2, 8, 12, 20, 4, 600, 1e-10);
    check_against_reference<double>(1, 3, 64, 48, 2, 500, 1e-10);
    // Levels 1 and 2 built in one pass (both above the one-block tail): whole float4 texels
    // (channels last) and from a planar level 0; level 2 odd (200x120 -> 100x60 -> 50x30 ->
    // 25x15), so level 3 takes the general taps.
    check_against_reference<float>(1, 4, 200, 120, 6, 3000, 2e-5);
    check_against_reference<float>(1, 4, 200, 120, 6, 3000, 2e-5, true);
    // Level 0 written from six levels that halve (256x128 .. 4x2), the coarser ones folded
    // into the sixth first: float4 groups and a planar double chain.
    check_against_reference<float>(1, 4, 256, 128, 9, 2000, 2e-5);
    check_against_reference<double>(2, 3, 128, 64, 8, 1000, 1e-10, true);
    // Levels above the one-block tail (more than 16384 values) with odd sides: the general
    // taps in their own launches (chain and fold), level 0 assigned through them.
    check_against_reference<double>(1, 4, 301, 203, 9, 3000, 1e-10);
    check_against_reference<float>(1, 4, 301, 203, 9, 3000, 2e-5, true);
    // Coarse levels that halve, up to five a launch (box_pyramid_kernel), and their
    // gradients folded in one launch (fold_ancestors_kernel): from one 16x16 tile in channel
    // groups of four with a part group (40, 5 channels), layers; and an RGBA 1024^2 chain
    // whose level 2 takes 8x8 tiles (levels 3..7), then one tile (8..10).
    check_against_reference<float>(1, 40, 256, 256, 9, 3000, 2e-5);
    check_against_reference<double>(2, 5, 512, 256, 10, 3000, 1e-10, true);
    // (Float positions on a 1024-texel side are 2^-14 texel apart, ~3e-5 of a random texel step.)
    check_against_reference<float>(1, 4, 1024, 1024, 11, 4000, 1e-4, true);
    // A tiny level 0 under many points: its texel gradients summed in shared memory by the
    // strided pass (global atomics on 16 texels would serialize), RGBA and any channels.
    check_against_reference<float>(1, 4, 4, 4, 3, 4000, 2e-4);
    check_against_reference<double>(2, 3, 6, 4, 3, 4000, 1e-10, true);
    // Float groups decide by their own copies: 8 channels put this level 0 in the block's
    // copy (the strided pass); 40 channels keep 64 texels out of it (4 lanes a point or more)
    // and take the lean kernel, where the other kernels' one copy would have taken it.
    check_against_reference<float>(1, 8, 4, 4, 3, 4000, 2e-4);
    check_against_reference<float>(1, 40, 8, 8, 4, 200000, 2e-4);
    check_against_reference<double>(1, 4, 16, 16, 5, 0, 1e-10);      // no points: the image's gradient is 0
    check_against_reference<double>(1, 64, 64, 64, 4, 2000, 1e-10);  // 64 channels, many points per texel
    check_against_reference<float>(1, 64, 64, 64, 4, 2000, 2e-4);    // float atomics in any order
}

namespace {

// Whether a backward whose upstream gradient holds one `bad` value (at a random place) among
// random finite ones raises the flag; the fold alone likewise, for one bad coarse value.
// `texture_grad` false: the backward of a texture that takes no gradient (d/d uv alone).
template <class T>
bool upstream_flagged(uint32_t channels, uint32_t width, uint32_t height, uint32_t levels, bool planar, T bad,
                      bool fold_only, bool texture_grad = true) {
    CAPTURE(channels);
    CAPTURE(width);
    CAPTURE(planar);
    CAPTURE(fold_only);
    CAPTURE(texture_grad);
    const FeatureChainShape shape{2, channels, width, height, levels, planar};
    const size_t count = 300;
    std::mt19937 rng(channels + width);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<double> image(shape.level_values(0)), uv, lod, grad_out(count * channels);
    for (double& v : image) v = unit(rng);
    for (size_t i = 0; i < count; ++i) {
        uv.push_back(unit(rng));
        uv.push_back(unit(rng));
        lod.push_back(unit(rng) * levels);
    }
    for (double& g : grad_out) g = unit(rng) - 0.5;
    DeviceBuffer<T> d_image = upload<T>(image), d_coarse(std::max<size_t>(shape.coarse_values(), 1));
    std::vector<double> coarse_grad(std::max<size_t>(shape.coarse_values(), 1));
    for (double& g : coarse_grad) g = unit(rng) - 0.5;
    if (fold_only) coarse_grad[rng() % coarse_grad.size()] = double(bad);
    else grad_out[rng() % grad_out.size()] = double(bad);
    DeviceBuffer<T> d_uv = upload<T>(uv), d_lod = upload<T>(lod), d_grad_out = upload<T>(grad_out);
    DeviceBuffer<T> d_grad_image(shape.level_values(0)), d_grad_coarse = upload<T>(coarse_grad), d_grad_uv(2 * count);
    build_feature_chain<T>(shape, d_image.data(), d_coarse.data(), nullptr);
    NonFiniteFlag nonfinite;
    const ChainLevels<T> grad{d_grad_image.data(), d_grad_coarse.data()};
    if (fold_only) {
        fold_chain_gradient<T>(shape, grad, nullptr, nonfinite.device_word());
    } else {
        const PointBatch<T> points{d_uv.data(), d_lod.data(), nullptr, count};
        sample_points_backward<T>(shape, {d_image.data(), d_coarse.data()}, points, d_grad_out.data(),
                                  texture_grad ? grad : ChainLevels<T>{}, d_grad_uv.data(), nullptr, nullptr,
                                  nonfinite.device_word());
    }
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    const bool raised = nonfinite.take();
    CHECK_FALSE(nonfinite.take());  // taking lowers it
    return raised;
}

}  // namespace

TEST_CASE("CUDA backwards flag NaN and infinite gradients without a host sync") {
    const float nan = std::nanf(""), inf = INFINITY;
    // Upstream of the point backward: the RGBA float4 path, the per-channel path, doubles.
    for (bool planar : {false, true}) {
        CHECK(upstream_flagged<float>(4, 32, 16, 5, planar, nan, false));
        CHECK(upstream_flagged<float>(3, 37, 21, 6, planar, -inf, false));
        CHECK(upstream_flagged<double>(40, 12, 20, 4, planar, double(inf), false));
        CHECK(upstream_flagged<float>(4, 32, 16, 5, planar, nan, false, false));  // d/d uv alone
        CHECK(upstream_flagged<float>(40, 12, 20, 4, planar, inf, false, false));
        // Upstream of the fold: the float4 groups, a thread per texel, odd sides' general taps.
        CHECK(upstream_flagged<float>(4, 32, 16, 5, planar, inf, true));
        CHECK(upstream_flagged<double>(3, 64, 48, 7, planar, double(nan), true));
        CHECK(upstream_flagged<float>(4, 37, 21, 6, planar, nan, true));
    }
    CHECK(upstream_flagged<float>(4, 301, 203, 9, false, -inf, true));          // levels above the one-block tail
    CHECK(upstream_flagged<float>(4, 32, 16, 5, false, 1e38f, true) == false);  // large but finite: no overflow here
}

TEST_CASE("CUDA differentiable sampling refuses bad shapes before launching") {
    DeviceBuffer<float> buffer(16), coarse(16);
    CHECK_THROWS_WITH_AS(build_feature_chain<float>({1, 65, 4, 4, 1}, buffer.data(), coarse.data(), nullptr),
                         doctest::Contains("1..64 channels"), Error);
    CHECK_THROWS_WITH_AS(build_feature_chain<float>({1, 1, 4, 4, 4}, buffer.data(), coarse.data(), nullptr),
                         doctest::Contains("1..3 levels"), Error);
    CHECK_THROWS_AS(build_feature_chain<float>({1, 1, 0, 4, 1}, buffer.data(), coarse.data(), nullptr), Error);
    CHECK_THROWS_WITH_AS(build_feature_chain<float>({1, 1, 4, 4, 3}, buffer.data(), nullptr, nullptr),
                         doctest::Contains("a buffer for the rest"), Error);
    CHECK_THROWS_WITH_AS(sample_points_forward<float>({1, 1, 4, 4, 1}, {buffer.data(), nullptr},
                                                      {nullptr, nullptr, nullptr, 3}, buffer.data(), nullptr),
                         doctest::Contains("needs a chain, uv, lod"), Error);
}

TEST_CASE("A one-level chain needs no coarse buffer") {
    // Level 0 only (levels = 1): sampling is bilinear in the image, the gradient lands on it.
    check_against_reference<double>(1, 3, 9, 7, 1, 200, 1e-10);
    check_against_reference<double>(1, 3, 9, 7, 1, 200, 1e-10, true);
}

TEST_CASE("CUDA patch grids: points as glimpse.sample_patches places them, and their adjoint's sums") {
    const PatchGrid grid{2, 7, 5};
    const size_t rows = size_t{grid.images} * grid.patches, count = grid.points();
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<double> meta(rows * 5), grad_uv(2 * count), grad_lod(count);
    for (double& m : meta) m = unit(rng) * 1.4 - 0.2;
    for (double& g : grad_uv) g = unit(rng) * 2 - 1;
    for (double& g : grad_lod) g = unit(rng) * 2 - 1;
    const auto step = [&](uint32_t i) { return (i + 0.5) / grid.patch_size - 0.5; };
    // The definitions: point (row, k, j) at (cu + step_j su, cv + step_k sv), the row's lod
    // and its image; a row's gradient sums its points' (times the steps for su, sv).
    std::vector<double> want_uv, want_lod, want_meta(rows * 5, 0.0);
    std::vector<int32_t> want_layer;
    for (size_t r = 0; r < rows; ++r)
        for (uint32_t k = 0; k < grid.patch_size; ++k)
            for (uint32_t j = 0; j < grid.patch_size; ++j) {
                const size_t i = want_lod.size();
                want_uv.push_back(meta[r * 5] + step(j) * meta[r * 5 + 2]);
                want_uv.push_back(meta[r * 5 + 1] + step(k) * meta[r * 5 + 3]);
                want_lod.push_back(meta[r * 5 + 4]);
                want_layer.push_back(int32_t(r / grid.patches));
                want_meta[r * 5] += grad_uv[2 * i];
                want_meta[r * 5 + 1] += grad_uv[2 * i + 1];
                want_meta[r * 5 + 2] += grad_uv[2 * i] * step(j);
                want_meta[r * 5 + 3] += grad_uv[2 * i + 1] * step(k);
                want_meta[r * 5 + 4] += grad_lod[i];
            }
    const auto run = [&](auto zero, double tolerance) {
        using T = decltype(zero);
        CAPTURE(sizeof(T));
        DeviceBuffer<T> d_meta = upload<T>(meta), uv = upload<T>(std::vector<double>(2 * count, std::nan(""))),
                        lod = upload<T>(std::vector<double>(count, std::nan(""))), d_grad_uv = upload<T>(grad_uv),
                        d_grad_lod = upload<T>(grad_lod), out = upload<T>(std::vector<double>(rows * 5, std::nan("")));
        DeviceBuffer<int32_t> layer(count);
        TVLM_CUDA_CHECK(cudaMemset(layer.data(), 0xff, count * sizeof(int32_t)));
        patch_grid_points<T>(d_meta.data(), grid, uv.data(), lod.data(), layer.data(), nullptr);
        patch_grid_adjoint<T>(d_grad_uv.data(), d_grad_lod.data(), grid, out.data(), nullptr);
        TVLM_CUDA_CHECK(cudaDeviceSynchronize());
        check_close(download(uv.data(), 2 * count), want_uv, tolerance, "uv");
        check_close(download(lod.data(), count), want_lod, tolerance, "lod");
        check_close(download(out.data(), rows * 5), want_meta, tolerance * grid.patch_size * grid.patch_size,
                    "the rows' gradients");
        std::vector<int32_t> got_layer(count);
        TVLM_CUDA_CHECK(cudaMemcpy(got_layer.data(), layer.data(), count * sizeof(int32_t), cudaMemcpyDeviceToHost));
        CHECK(got_layer == want_layer);
    };
    run(double{}, 1e-14);
    run(float{}, 4e-7);
    CHECK_THROWS_WITH_AS(patch_grid_points<float>(nullptr, PatchGrid{1, 1, 0}, nullptr, nullptr, nullptr, nullptr),
                         doctest::Contains("patch size of at least 1"), Error);
}

TEST_CASE("CUDA patch gradients: planar patches transposed into the points' order, channels last") {
    const PatchGrid grid{2, 5, 3};
    const uint32_t channels = 3, per_patch = grid.patch_size * grid.patch_size;
    const size_t rows = size_t{grid.images} * grid.patches, values = grid.points() * channels;
    std::vector<double> planar(values);
    for (size_t i = 0; i < values; ++i) planar[i] = double(i) + 0.25;  // each value its own
    // [rows, channels, P * P] -> [rows * P * P, channels]
    std::vector<double> want(values);
    for (size_t r = 0; r < rows; ++r)
        for (uint32_t c = 0; c < channels; ++c)
            for (uint32_t s = 0; s < per_patch; ++s)
                want[(r * per_patch + s) * channels + c] = planar[(r * channels + c) * per_patch + s];
    const auto run = [&](auto zero) {
        using T = decltype(zero);
        CAPTURE(sizeof(T));
        const DeviceBuffer<T> in = upload<T>(planar);
        DeviceBuffer<T> out = upload<T>(std::vector<double>(values + 4, std::nan("")));
        patch_grad_channels_last<T>(in.data(), grid, channels, out.data(), nullptr);
        TVLM_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<double> got = download(out.data(), values + 4);
        CHECK(std::vector<double>(got.begin(), got.begin() + std::ptrdiff_t(values)) == want);
        for (size_t i = values; i < got.size(); ++i) CHECK(std::isnan(got[i]));  // nothing written past the end
    };
    run(double{});
    run(float{});
    CHECK_THROWS_WITH_AS(patch_grad_channels_last<float>(nullptr, grid, channels, nullptr, nullptr),
                         doctest::Contains("needs its input"), Error);
}
