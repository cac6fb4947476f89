// The fused CUDA Gaussian-field kernels against the double CPU reference: values, squared
// distances and every gradient, float64 (tight) and float32 (a stated relative error),
// 2D and 3D, with more Gaussians and points than one tile or one chunk holds, and with
// points enough for the forward's four-points-per-thread kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "engine/error.h"
#include "cuda/fields/gaussian_field_kernels.h"
#include "cuda/nonfinite_flag.h"
#include "tests/random_field.h"

namespace tvlm {
namespace {

template <class T>
std::vector<T> to(const std::vector<double>& v) {
    return std::vector<T>(v.begin(), v.end());
}
template <class T>
DeviceBuffer<T> upload(const std::vector<T>& v) {
    DeviceBuffer<T> d(v.size());
    TVLM_CUDA_CHECK(cudaMemcpy(d.data(), v.data(), d.bytes(), cudaMemcpyHostToDevice));
    return d;
}
template <class T>
std::vector<double> download(const DeviceBuffer<T>& d) {
    std::vector<T> v(d.size());
    TVLM_CUDA_CHECK(cudaMemcpy(v.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost));
    return std::vector<double>(v.begin(), v.end());
}

// Largest difference relative to the largest magnitude of `expected`.
double relative_error(const std::vector<double>& expected, const std::vector<double>& got) {
    REQUIRE(expected.size() == got.size());
    double scale = 0, worst = 0;
    for (double e : expected) scale = std::max(scale, std::fabs(e));
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - expected[i]));
    return worst / std::max(scale, 1e-300);
}

template <class T>
void check_against_reference(int dims, double tolerance, size_t kN = 300, size_t kB = 1100) {
    CAPTURE(dims);
    CAPTURE(sizeof(T));
    CAPTURE(kB);
    std::mt19937 random(9);
    const Field f = random_field(dims, kN, random);
    std::vector<double> points(kB * size_t(dims)), upstream(kB);
    for (size_t b = 0; b < kB; ++b)
        for (int i = 0; i < dims; ++i)
            points[b * size_t(dims) + size_t(i)] = f.means[(b % kN) * size_t(dims) + size_t(i)] +
                                                   std::uniform_real_distribution<double>(-0.1, 0.1)(random);
    for (double& g : upstream) g = std::uniform_real_distribution<double>(-1, 1)(random);
    std::vector<double> squared;
    const std::vector<double> values = field_forward_reference(f.view(), points, &squared);
    const FieldGradients grads = field_backward_reference(f.view(), points, upstream);

    const DeviceBuffer<T> d_points = upload(to<T>(points)), d_means = upload(to<T>(f.means)),
                          d_chol = upload(to<T>(f.cholesky)), d_weights = upload(to<T>(f.weights)),
                          d_up = upload(to<T>(upstream));
    const FieldArgs<T> args{dims, kB, d_points.data(), kN, d_means.data(), d_chol.data(), d_weights.data()};
    DeviceBuffer<T> d_values(kB), d_squared(kB * kN), g_points(points.size()), g_means(f.means.size()),
        g_chol(f.cholesky.size()), g_weights(kN);
    TVLM_CUDA_CHECK(cudaMemset(d_values.data(), 0xff, d_values.bytes()));  // poison
    gaussian_field_forward(args, d_values.data(), d_squared.data(), nullptr);
    gaussian_field_backward(args, d_up.data(), {g_points.data(), g_means.data(), g_chol.data(), g_weights.data()},
                            nullptr);
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(relative_error(values, download(d_values)) < tolerance);
    CHECK(relative_error(squared, download(d_squared)) < tolerance);
    CHECK(relative_error(grads.points, download(g_points)) < tolerance);
    CHECK(relative_error(grads.means, download(g_means)) < tolerance);
    CHECK(relative_error(grads.cholesky, download(g_chol)) < tolerance);
    CHECK(relative_error(grads.weights, download(g_weights)) < tolerance);
    // Values only: no [B, N] buffer needed.
    gaussian_field_forward(args, d_values.data(), static_cast<T*>(nullptr), nullptr);
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(relative_error(values, download(d_values)) < tolerance);
}

TEST_CASE("CUDA Gaussian fields equal the double reference: values, distances and every gradient") {
    // float64: rounding only; float32: __expf and float sums over 300 Gaussians / 1100 points.
    for (int dims : {2, 3}) {
        check_against_reference<double>(dims, 1e-10);
        check_against_reference<float>(dims, 2e-4);
    }
    // So many points that the forward gives each thread four (cuda/fields/gaussian_field.cu: at
    // least 4 x 256 per block wanted, 4 blocks per SM), with a ragged last block.
    int device = 0, sms = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&device));
    TVLM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const size_t many = size_t(256) * 4 * 4 * size_t(sms) + 77;
    for (int dims : {2, 3}) {
        check_against_reference<double>(dims, 1e-10, 20, many);
        check_against_reference<float>(dims, 2e-4, 20, many);
    }
}

// The documented refusal of a diagonal entry of L that is not positive and finite, held on
// the device: the forward raises the flag and every value the bad Gaussian reaches is NaN;
// a valid field leaves the flag down and its values finite.
template <class T>
void check_bad_diagonals(int dims) {
    CAPTURE(dims);
    CAPTURE(sizeof(T));
    constexpr size_t kN = 40, kB = 300;
    std::mt19937 random(11);
    const Field f = random_field(dims, kN, random);
    std::vector<double> points(kB * size_t(dims));
    for (double& p : points) p = std::uniform_real_distribution<double>(-1, 1)(random);
    const DeviceBuffer<T> d_points = upload(to<T>(points)), d_means = upload(to<T>(f.means)),
                          d_weights = upload(to<T>(f.weights));
    NonFiniteFlag refused;
    DeviceBuffer<T> d_values(kB);
    const auto run = [&](const std::vector<double>& cholesky) {
        const DeviceBuffer<T> d_chol = upload(to<T>(cholesky));
        const FieldArgs<T> args{
            dims, kB, d_points.data(), kN, d_means.data(), d_chol.data(), d_weights.data(), refused.device_word()};
        gaussian_field_forward(args, d_values.data(), static_cast<T*>(nullptr), nullptr);
        TVLM_CUDA_CHECK(cudaDeviceSynchronize());
        return download(d_values);
    };
    for (double v : run(f.cholesky)) CHECK(std::isfinite(v));
    CHECK_FALSE(refused.take());
    const size_t tri = size_t(dims) * size_t(dims + 1) / 2;
    for (double bad :
         {-1.0, 0.0, -0.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
        for (int i = 0; i < dims; ++i)
            for (size_t n : {size_t{0}, kN - 1}) {  // the first and the last Gaussian of the tile
                CAPTURE(bad);
                CAPTURE(i);
                CAPTURE(n);
                std::vector<double> cholesky = f.cholesky;
                cholesky[n * tri + size_t(i * (i + 1) / 2 + i)] = bad;  // L(i, i), packed row by row
                const std::vector<double> values = run(cholesky);
                CHECK(refused.take());
                CHECK(std::all_of(values.begin(), values.end(), [](double v) { return std::isnan(v); }));
            }
    // A negative off-diagonal entry is a valid factor.
    if (dims > 1) {
        std::vector<double> cholesky = f.cholesky;
        cholesky[1] = -std::fabs(cholesky[1]) - 0.1;
        for (double v : run(cholesky)) CHECK(std::isfinite(v));
        CHECK_FALSE(refused.take());
    }
}

TEST_CASE("CUDA Gaussian fields refuse a diagonal entry of L that is not positive and finite, on the device") {
    for (int dims : {2, 3}) {
        check_bad_diagonals<float>(dims);
        check_bad_diagonals<double>(dims);
    }
}

TEST_CASE("CUDA Gaussian fields refuse empty or malformed input, launching nothing") {
    DeviceBuffer<float> one(8);
    FieldArgs<float> args{3, 1, one.data(), 1, one.data(), one.data(), one.data()};
    args.count = 0;
    CHECK_THROWS_WITH_AS(gaussian_field_forward(args, one.data(), static_cast<float*>(nullptr), nullptr),
                         doctest::Contains("N = 0"), Error);
    args.count = 1;
    args.points_count = 0;
    CHECK_THROWS_WITH_AS(gaussian_field_forward(args, one.data(), static_cast<float*>(nullptr), nullptr),
                         doctest::Contains("B = 0"), Error);
    args.points_count = 1;
    args.dims = 4;
    CHECK_THROWS_WITH_AS(gaussian_field_forward(args, one.data(), static_cast<float*>(nullptr), nullptr),
                         doctest::Contains("2D or 3D"), Error);
    args.dims = 3;
    CHECK_THROWS_WITH_AS(gaussian_field_backward(args, one.data(), FieldGradientsOut<float>{}, nullptr),
                         doctest::Contains("null"), Error);
}

}  // namespace
}  // namespace tvlm
