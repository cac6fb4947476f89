// CUDA differentiable point sampling (cuda/point_sampling_grad.h) against the double CPU
// reference (engine/differentiable/): the chain, the samples, the gradients to every level
// folded into level 0, to uv and to lod; float64 to 1e-10, float32 within its rounding.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "cuda_check.h"
#include "device_buffer.h"
#include "differentiable/feature_chain.h"
#include "differentiable/point_sampling.h"
#include "error.h"
#include "point_sampling_grad.h"

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

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tolerance, const char* what) {
    REQUIRE(got.size() == want.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]) / (1 + std::abs(want[i])));
    INFO(what, ": worst relative difference ", worst);
    CHECK(worst <= tolerance);
}

template <class T>
void check_against_reference(uint32_t layers, uint32_t channels, uint32_t width, uint32_t height, uint32_t levels,
                             size_t count, double tolerance) {
    CAPTURE(channels);
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
    // CUDA, in T.
    const FeatureChainShape shape{layers, channels, width, height, levels};
    DeviceBuffer<T> d_chain = upload<T>(image, shape.values());
    DeviceBuffer<T> d_uv = upload<T>(uv), d_lod = upload<T>(lod), d_grad_out = upload<T>(grad_out);
    DeviceBuffer<int32_t> d_layer(count);
    TVLM_CUDA_CHECK(cudaMemcpy(d_layer.data(), device_layer.data(), count * sizeof(int32_t), cudaMemcpyHostToDevice));
    DeviceBuffer<T> d_out(count * channels), d_grad_chain(shape.values()), d_grad_uv(2 * count), d_grad_lod(count);
    TVLM_CUDA_CHECK(cudaMemset(d_out.data(), 0xFF, d_out.bytes()));  // poison: NaN
    build_feature_chain<T>(shape, d_chain.data(), nullptr);
    const PointBatch<T> points{d_uv.data(), d_lod.data(), d_layer.data(), count};
    sample_points_forward<T>(shape, d_chain.data(), points, d_out.data(), nullptr);
    sample_points_backward<T>(shape, d_chain.data(), points, d_grad_out.data(), d_grad_chain.data(), d_grad_uv.data(),
                              d_grad_lod.data(), nullptr);
    fold_chain_gradient<T>(shape, d_grad_chain.data(), nullptr);
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    for (uint32_t l = 0; l < levels; ++l)
        check_close(download(d_chain.data() + shape.offset(l), shape.level_values(l)), chain.levels[l], tolerance,
                    "chain level");
    check_close(download(d_out.data(), count * channels), want, tolerance, "samples");
    check_close(download(d_grad_chain.data(), shape.level_values(0)), want_image_grad, tolerance, "d loss / d image");
    // uv gradients scale with the level's size: compare relative to it.
    check_close(download(d_grad_uv.data(), 2 * count), want_grad.uv, tolerance * width * channels, "d loss / d uv");
    check_close(download(d_grad_lod.data(), count), want_grad.lod, tolerance * channels, "d loss / d lod");
}

}  // namespace

TEST_CASE("CUDA differentiable point samples equal the double reference: values, image, uv and lod gradients") {
    for (uint32_t channels : {1u, 3u, 4u, 40u}) {
        check_against_reference<double>(2, channels, 37, 21, 6, 500, 1e-10);  // odd sizes, layers, the full chain
        check_against_reference<float>(2, channels, 37, 21, 6, 500, 2e-5);
    }
    check_against_reference<double>(1, 64, 64, 64, 4, 2000, 1e-10);  // 64 channels, many points per texel
    check_against_reference<float>(1, 64, 64, 64, 4, 2000, 2e-4);     // float atomics in any order
}

TEST_CASE("CUDA differentiable sampling refuses bad shapes before launching") {
    DeviceBuffer<float> buffer(16);
    CHECK_THROWS_WITH_AS(build_feature_chain<float>({1, 65, 4, 4, 1}, buffer.data(), nullptr),
                         doctest::Contains("1..64 channels"), Error);
    CHECK_THROWS_WITH_AS(build_feature_chain<float>({1, 1, 4, 4, 4}, buffer.data(), nullptr),
                         doctest::Contains("1..3 levels"), Error);
    CHECK_THROWS_AS(build_feature_chain<float>({1, 1, 0, 4, 1}, buffer.data(), nullptr), Error);
    CHECK_THROWS_WITH_AS(sample_points_forward<float>({1, 1, 4, 4, 1}, buffer.data(), {nullptr, nullptr, nullptr, 3},
                                                      buffer.data(), nullptr),
                         doctest::Contains("needs a chain, uv, lod"), Error);
}
