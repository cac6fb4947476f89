// The Gaussian field's double CPU reference (engine/fields): forward against the
// Mahalanobis distance through an explicit inverse covariance, backward against central
// finite differences for every input (points, means, all entries of L, weights), on
// rotated, badly conditioned Gaussians (condition numbers up to 1e4), in 2D and 3D.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "engine/error.h"
#include "engine/fields/gaussian_field.h"
#include "engine/fields/gaussian_pair.h"
#include "tests/random_field.h"

namespace tvlm {
namespace {

// (x - mu)^T Sigma^-1 (x - mu) by Gauss-Jordan on Sigma: independent of the substitutions.
double quadratic_form(const double* x, const double* mu, const double* sigma, int dims) {
    double a[3][4] = {};
    for (int i = 0; i < dims; ++i) {
        for (int j = 0; j < dims; ++j) a[i][j] = sigma[i * dims + j];
        a[i][dims] = x[i] - mu[i];
    }
    for (int c = 0; c < dims; ++c)
        for (int r = 0; r < dims; ++r) {
            if (r == c) continue;
            const double m = a[r][c] / a[c][c];
            for (int k = 0; k <= dims; ++k) a[r][k] -= m * a[c][k];
        }
    double q = 0;
    for (int i = 0; i < dims; ++i) q += (x[i] - mu[i]) * a[i][dims] / a[i][i];
    return q;
}

TEST_CASE("Gaussian field forward equals the quadratic form through the covariance, 2D and 3D") {
    std::mt19937 random(4);
    for (int dims : {2, 3}) {
        CAPTURE(dims);
        const Field f = random_field(dims, 6, random);
        std::vector<double> points(size_t(dims) * 9);
        for (double& p : points) p = std::uniform_real_distribution<double>(-0.6, 0.6)(random);
        std::vector<double> squared;
        const std::vector<double> values = field_forward_reference(f.view(), points, &squared);
        REQUIRE(values.size() == 9);
        REQUIRE(squared.size() == 9 * 6);
        for (size_t b = 0; b < 9; ++b) {
            double expected = 0;
            for (size_t n = 0; n < 6; ++n) {
                const double q = quadratic_form(&points[b * size_t(dims)], &f.means[n * size_t(dims)],
                                                &f.covariances[n * size_t(dims * dims)], dims);
                CHECK(squared[b * 6 + n] == doctest::Approx(q).epsilon(1e-9));
                expected += f.weights[n] * std::exp(-0.5 * q);
            }
            CHECK(values[b] == doctest::Approx(expected).epsilon(1e-9));
        }
    }
}

TEST_CASE("Gaussian field backward equals central finite differences for every input, 2D and 3D") {
    std::mt19937 random(5);
    for (int dims : {2, 3}) {
        CAPTURE(dims);
        Field f = random_field(dims, 4, random);
        // Points near the means, where the gradients are large.
        std::vector<double> points;
        for (size_t b = 0; b < 5; ++b)
            for (int i = 0; i < dims; ++i)
                points.push_back(f.means[(b % 4) * size_t(dims) + size_t(i)] +
                                 std::uniform_real_distribution<double>(-0.05, 0.05)(random));
        std::vector<double> upstream(5);
        for (double& g : upstream) g = std::uniform_real_distribution<double>(-1, 1)(random);
        const FieldGradients grads = field_backward_reference(f.view(), points, upstream);
        const auto loss = [&] {
            const std::vector<double> values = field_forward_reference(f.view(), points);
            double l = 0;
            for (size_t b = 0; b < values.size(); ++b) l += upstream[b] * values[b];
            return l;
        };
        const auto check_all = [&](std::vector<double>& inputs, const std::vector<double>& analytic, const char* what) {
            CAPTURE(what);
            REQUIRE(analytic.size() == inputs.size());
            for (size_t i = 0; i < inputs.size(); ++i) {
                CAPTURE(i);
                const double keep = inputs[i], h = 1e-6 * std::max(1.0, std::fabs(keep));
                inputs[i] = keep + h;
                const double up = loss();
                inputs[i] = keep - h;
                const double down = loss();
                inputs[i] = keep;
                const double numeric = (up - down) / (2 * h);
                CHECK(analytic[i] == doctest::Approx(numeric).epsilon(1e-5).scale(1e-3));
            }
        };
        check_all(points, grads.points, "points");
        check_all(f.means, grads.means, "means");
        check_all(f.cholesky, grads.cholesky, "every entry of L");
        check_all(f.weights, grads.weights, "weights");
    }
}

TEST_CASE("Gaussian fields refuse what they cannot evaluate, with the reason") {
    std::mt19937 random(6);
    Field f = random_field(3, 2, random);
    const std::vector<double> points = {0.1, 0.2, 0.3};
    CHECK_THROWS_WITH_AS(field_forward_reference({3, 0, f.means.data(), f.cholesky.data(), f.weights.data()}, points),
                         doctest::Contains("N = 0"), Error);
    CHECK_THROWS_WITH_AS(field_forward_reference(f.view(), std::vector<double>{}), doctest::Contains("B >= 1"), Error);
    CHECK_THROWS_WITH_AS(field_forward_reference({4, 2, f.means.data(), f.cholesky.data(), f.weights.data()}, points),
                         doctest::Contains("2D or 3D"), Error);
    f.cholesky[fields::tri(2, 2)] = 0.0;
    CHECK_THROWS_WITH_AS(field_forward_reference(f.view(), points), doctest::Contains("must be positive"), Error);
    f.cholesky[fields::tri(2, 2)] = 0.5;
    CHECK_THROWS_WITH_AS(field_forward_reference(f.view(), std::vector<double>{0.1, std::nan(""), 0.3}),
                         doctest::Contains("point 0 has a NaN"), Error);
    f.weights[1] = std::numeric_limits<double>::infinity();
    CHECK_THROWS_WITH_AS(field_forward_reference(f.view(), points), doctest::Contains("weight is NaN or infinite"),
                         Error);
    f.weights[1] = 1.0;
    CHECK_THROWS_WITH_AS(field_backward_reference(f.view(), points, std::vector<double>{1, 2}),
                         doctest::Contains("2 upstream gradients for 1 points"), Error);
}

}  // namespace
}  // namespace tvlm

namespace tvlm {
namespace {

TEST_CASE("a 2D field's strongest, separated maxima become fixations, strongest first") {
    // Three round Gaussians; the weakest sits close to the strongest and is suppressed.
    const std::vector<double> means = {0.25, 0.25, 0.75, 0.6, 0.3, 0.28};
    const std::vector<double> cholesky = {0.05, 0, 0.05, 0.08, 0, 0.08, 0.04, 0, 0.04};
    const std::vector<double> weights = {2.0, 1.0, 0.5};
    const GaussianFieldView<double> field{2, 3, means.data(), cholesky.data(), weights.data()};
    const std::vector<Fixation> two = fixations_from_field(field, 3, 0.15, 100, 100);
    REQUIRE(two.size() == 2);  // the third maximum lies within 0.15 of the first
    CHECK(two[0].x == doctest::Approx(0.255).epsilon(0.02));
    CHECK(two[0].y == doctest::Approx(0.255).epsilon(0.02));
    CHECK(two[1].x == doctest::Approx(0.755).epsilon(0.02));
    CHECK(two[1].y == doctest::Approx(0.605).epsilon(0.02));
    CHECK(fixations_from_field(field, 1).size() == 1);
    CHECK_THROWS_WITH_AS(fixations_from_field(field, 0), doctest::Contains("k = 0"), Error);
    const std::vector<double> m3 = {0, 0, 0}, l3 = {1, 0, 1, 0, 0, 1}, w3 = {1};
    CHECK_THROWS_WITH_AS(fixations_from_field({3, 1, m3.data(), l3.data(), w3.data()}, 1),
                         doctest::Contains("2D field"), Error);
}

TEST_CASE("a saliency cell with a larger neighbour in any direction is no peak") {
    // The centre (4) is below one neighbour: above, below, left or right, and each diagonal.
    for (uint32_t neighbour = 0; neighbour < 9; ++neighbour) {
        if (neighbour == 4) continue;
        CAPTURE(neighbour);
        std::vector<float> values(9, 0.0f);
        values[4] = 4.0f;
        values[neighbour] = 5.0f;
        const std::vector<Fixation> peaks = fixations_from_saliency({3, 3, values}, 3, 0.0);
        REQUIRE(peaks.size() == 1);
        CHECK(peaks[0].x == doctest::Approx((neighbour % 3 + 0.5) / 3));
        CHECK(peaks[0].y == doctest::Approx((neighbour / 3 + 0.5) / 3));
    }
}

TEST_CASE("a saliency grid empty on either axis, or with the wrong count of values, is refused") {
    const std::vector<float> four(4, 1.0f);
    CHECK(fixations_from_saliency({2, 2, four}, 1, 0.1).size() == 1);
    CHECK_THROWS_WITH_AS(fixations_from_saliency({0, 2, {}}, 1, 0.1), doctest::Contains("a saliency grid of 0x2"),
                         Error);
    CHECK_THROWS_WITH_AS(fixations_from_saliency({2, 0, {}}, 1, 0.1), doctest::Contains("a saliency grid of 2x0"),
                         Error);
    CHECK_THROWS_WITH_AS(fixations_from_saliency({3, 2, four}, 1, 0.1), doctest::Contains("needs 6 values, not 4"),
                         Error);
}

}  // namespace
}  // namespace tvlm
