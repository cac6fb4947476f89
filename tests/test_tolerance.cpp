// The helpers every GPU-against-reference comparison rests on, with known inputs and
// outputs: the one sampling tolerance (tolerance.h), texel agreement per format, and the
// anisotropic footprint rule (patch.h). Each bound is checked at its edge: just inside is
// accepted, just outside refused, so a changed constant or comparison is noticed.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <limits>

#include "engine/textures/color.h"
#include "engine/sampling/patch.h"
#include "engine/sampling/tolerance.h"

namespace tvlm {
namespace {

constexpr double kStep = 1.0 / 256.0;

TEST_CASE("sample_tolerance: 3 weight steps, 4 with gradients, half an ulp more for float16 output") {
    const double slack = 2.0 * FLT_EPSILON * 0.5;  // the float rounding of a value of 0.5
    CHECK(sample_tolerance(false, false, 0.5) == doctest::Approx(3 * kStep + slack).epsilon(1e-12));
    CHECK(sample_tolerance(true, false, 0.5) == doctest::Approx(4 * kStep + slack).epsilon(1e-12));
    // float16 near 0.5 (exponent -1): half an ulp is 2^-12.
    CHECK(sample_tolerance(false, true, 0.5) ==
          doctest::Approx(3 * kStep + std::ldexp(1.0, -12) + slack).epsilon(1e-12));
    // Near 0 the half-ulp floor is 2^-25 (float16's smallest subnormal, halved).
    CHECK(sample_tolerance(false, true, 0.0) == doctest::Approx(3 * kStep + std::ldexp(1.0, -25)).epsilon(1e-9));
    // Negative values are measured by magnitude.
    CHECK(sample_tolerance(true, true, -0.5) == sample_tolerance(true, true, 0.5));
}

TEST_CASE("texel_matches: one storage step plus the weight error, at the edge of each") {
    // 8-bit: one step of 1/255 with exact weights; 2/256 more with hardware weights.
    CHECK(texel_matches(Format::rgba8_unorm, true, 0.5, 0.5 + 1.0 / 255.0, Weights::exact));
    CHECK_FALSE(texel_matches(Format::rgba8_unorm, true, 0.5, 0.5 + 1.0 / 255.0 + 1e-5, Weights::exact));
    CHECK(texel_matches(Format::rgba8_unorm, true, 0.5, 0.5 - 1.0 / 255.0 - 2 * kStep, Weights::hardware));
    CHECK_FALSE(texel_matches(Format::rgba8_unorm, true, 0.5, 0.5 - 1.0 / 255.0 - 2 * kStep - 1e-5, Weights::hardware));
    // float16 at 1.0: one ulp is 2^-10.
    CHECK(texel_matches(Format::rgba16f, false, 1.0, 1.0 + std::ldexp(1.0, -10), Weights::exact));
    CHECK_FALSE(texel_matches(Format::rgba16f, false, 1.0, 1.0 + std::ldexp(1.0, -10) + 1e-5, Weights::exact));
    // float32 at 1.0: four ulps (one rounding per bilinear tap) and two of float slack.
    const double ulp = std::ldexp(1.0, -23);
    CHECK(texel_matches(Format::rgba32f, false, 1.0, 1.0 + 6 * ulp, Weights::exact));
    CHECK_FALSE(texel_matches(Format::rgba32f, false, 1.0, 1.0 + 6 * ulp + 1e-9, Weights::exact));
    // Across a power of two the larger magnitude sets the step: 1 - 2^-24 against 1 + 4.5 ulps
    // of 1.0 differ by 5 ulps, inside 4 ulps of 1.0 and the slack, outside 4 ulps of 0.99.
    CHECK(texel_matches(Format::rgba32f, false, 1.0 - std::ldexp(1.0, -24), 1.0 + 4.5 * ulp, Weights::exact));
    CHECK(texel_matches(Format::rgba32f, false, 1.0 + 4.5 * ulp, 1.0 - std::ldexp(1.0, -24), Weights::exact));
    // sRGB colour channels: one 8-bit step in linear light; alpha is linear bytes.
    const double a = 200.0 / 255.0, b = 201.0 / 255.0;
    CHECK(texel_matches(Format::rgba8_srgb, true, a, b, Weights::exact));
    CHECK_FALSE(texel_matches(Format::rgba8_srgb, true, a, 203.0 / 255.0, Weights::exact));
    CHECK(texel_matches(Format::rgba8_srgb, false, a, b, Weights::exact));
    // NaN never matches, on either side.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    CHECK_FALSE(texel_matches(Format::rgba32f, false, nan, nan, Weights::hardware));
    CHECK_FALSE(texel_matches(Format::rgba32f, false, 0.0, nan, Weights::hardware));
}

// Gradients whose lengths in level-0 texels are rho_x along j and rho_y along k.
Gradients lengths(double rho_x, double rho_y, uint32_t width, uint32_t height) {
    return {rho_x / width, 0.0, 0.0, rho_y / height};
}

TEST_CASE("gradient_footprint: taps from the ratio of the gradients, level from the longer over the taps") {
    const uint32_t w = 256, h = 128;
    // Magnification (the longer gradient at most one texel): one tap, whatever the ratio.
    GradientFootprint f = gradient_footprint(lengths(1.0, 0.1, w, h), w, h);
    CHECK(f.taps == 1);
    CHECK(f.lod == doctest::Approx(0.0));
    f = gradient_footprint(lengths(1.0 + 1e-9, 0.1, w, h), w, h);
    CHECK(f.taps == 10);  // just past one texel: minification, ratio ceil(10.00..) - slack
    // Isotropic: one tap, level log2(rho).
    f = gradient_footprint(lengths(4.0, 4.0, w, h), w, h);
    CHECK(f.taps == 1);
    CHECK(f.lod == doctest::Approx(2.0));
    CHECK(f.major_is_x);  // ties step along j
    // A ratio of exactly 4 is 4 taps (the slack keeps rounding from making it 5).
    f = gradient_footprint(lengths(8.0, 2.0, w, h), w, h);
    CHECK(f.taps == 4);
    CHECK(f.lod == doctest::Approx(1.0));
    CHECK(f.major_is_x);
    // A ratio just over 4 is 5 taps; the major axis follows the longer gradient.
    f = gradient_footprint(lengths(2.0, 8.01, w, h), w, h);
    CHECK(f.taps == 5);
    CHECK_FALSE(f.major_is_x);
    CHECK(f.lod == doctest::Approx(std::log2(8.01 / 5)));
    // Clamped at the anisotropy asked for (16 by default), and at 1 for an isotropic unit.
    CHECK(gradient_footprint(lengths(64.0, 2.0, w, h), w, h).taps == 16);
    CHECK(gradient_footprint(lengths(64.0, 2.0, w, h), w, h, 8).taps == 8);
    CHECK(gradient_footprint(lengths(64.0, 2.0, w, h), w, h, 1).taps == 1);
    CHECK(gradient_footprint(lengths(64.0, 2.0, w, h), w, h, 0).taps == 1);
    // A zero-length minor gradient: the most taps allowed.
    CHECK(gradient_footprint(lengths(8.0, 0.0, w, h), w, h).taps == 16);
    // No footprint at all: level 0, one tap.
    f = gradient_footprint(lengths(0.0, 0.0, w, h), w, h);
    CHECK(f.taps == 1);
    CHECK(f.lod == 0.0);
    // Gradients are measured in texels of each axis: the same normalized gradient is twice
    // as long along the image's wider axis.
    f = gradient_footprint({1.0 / 128, 0.0, 0.0, 1.0 / 128}, w, h);
    CHECK(f.major_is_x);
    CHECK(f.taps == 2);
    CHECK(f.lod == doctest::Approx(0.0));
}

}  // namespace
}  // namespace tvlm
