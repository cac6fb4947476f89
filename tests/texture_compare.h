#pragma once
// Compares GPU mip levels with the CPU reference, one level at a time.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "engine/textures/half.h"
#include "engine/textures/image.h"
#include "engine/mips/reference_mips.h"
#include "engine/sampling/tolerance.h"

namespace tvlm::test {

// The largest |expected - actual| over every value of two images of one size.
inline double largest_difference(const ImageF& expected, const ImageF& actual) {
    REQUIRE(expected.texels.size() == actual.texels.size());
    double largest = 0;
    for (size_t i = 0; i < expected.texels.size(); ++i)
        largest = std::max(largest, double(std::abs(expected.texels[i] - actual.texels[i])));
    return largest;
}

// Levels 0 .. levels-1 of an RGBA32F box chain, read by `read(level)`, each within 1e-6 of
// the reference chain of `base` (float32 averages; the reference is exact). Returns the
// levels read.
inline std::vector<ImageF> check_rgba32f_box_chain(const std::function<ImageF(uint32_t)>& read, const ImageF& base,
                                                   uint32_t levels) {
    const std::vector<ImageF> want = reference_mip_chain(base, Format::rgba32f, MipFilter::box, levels);
    std::vector<ImageF> got;
    for (uint32_t l = 0; l < levels; ++l) {
        got.push_back(read(l));
        CHECK_MESSAGE(largest_difference(want[l], got.back()) <= 1e-6, "level " << l);
    }
    return got;
}

// A level transition with an exact 2:1 (or 1:1) ratio on both axes: weights are 0.5 or 1.
inline bool exact_ratio(Extent2D src, Extent2D dst) {
    const auto exact = [](uint32_t s, uint32_t d) { return s == 2 * d || s == d; };
    return exact(src.width, dst.width) && exact(src.height, dst.height);
}

// Counts texels of `actual` that do not match `expected` (bit-exact when `bit_exact`).
inline size_t mismatches(const ImageF& expected, const ImageF& actual, Format format, Weights weights, bool bit_exact,
                         std::string* first = nullptr) {
    REQUIRE(expected.width == actual.width);
    REQUIRE(expected.height == actual.height);
    size_t bad = 0;
    for (size_t i = 0; i < expected.texels.size(); ++i) {
        const auto c = static_cast<uint32_t>(i % expected.channels);
        const bool ok = bit_exact ? expected.texels[i] == actual.texels[i]
                                  : texel_matches(format, c < 3, expected.texels[i], actual.texels[i], weights);
        if (!ok && bad++ == 0 && first) {
            const size_t t = i / expected.channels;
            *first = "texel (" + std::to_string(t % expected.width) + "," + std::to_string(t / expected.width) +
                     ") channel " + std::to_string(c) + ": expected " + std::to_string(expected.texels[i]) + ", got " +
                     std::to_string(actual.texels[i]);
        }
    }
    return bad;
}

// Units in the last place of the stored float format (f16 or f32) between two values of
// the same sign.
inline int64_t ulps_apart(Format format, float expected, float actual) {
    if (format_info(format).component == ComponentType::f16)
        return std::abs(int64_t{float_to_half(expected)} - int64_t{float_to_half(actual)});
    return std::abs(int64_t{std::bit_cast<int32_t>(expected)} - int64_t{std::bit_cast<int32_t>(actual)});
}

// How the box filter agrees with its reference: 8-bit formats bit for bit, float formats
// within one ulp (box_filter.h). Returns the number of texel channels that do not.
inline size_t box_mismatches(const ImageF& expected, const ImageF& actual, Format format,
                             std::string* first = nullptr) {
    if (format_info(format).component == ComponentType::u8)
        return mismatches(expected, actual, format, Weights::exact, true, first);
    REQUIRE(expected.texels.size() == actual.texels.size());
    size_t bad = 0;
    for (size_t i = 0; i < expected.texels.size(); ++i) {
        if (ulps_apart(format, expected.texels[i], actual.texels[i]) <= 1) continue;
        if (bad++ == 0 && first)
            *first = "value " + std::to_string(i) + ": expected " + std::to_string(expected.texels[i]) + ", got " +
                     std::to_string(actual.texels[i]);
    }
    return bad;
}

// binary16 values bit for bit, any NaN equal to any NaN (the sign of a NaN is not
// specified). Returns the number of values that differ.
inline size_t half_mismatches(const ImageF& expected, const ImageF& actual, std::string* first = nullptr) {
    REQUIRE(expected.texels.size() == actual.texels.size());
    size_t bad = 0;
    for (size_t i = 0; i < expected.texels.size(); ++i) {
        const uint16_t want = float_to_half(expected.texels[i]), got = float_to_half(actual.texels[i]);
        if (want == got || (std::isnan(expected.texels[i]) && std::isnan(actual.texels[i]))) continue;
        if (bad++ == 0 && first)
            *first = "value " + std::to_string(i) + ": " + std::to_string(got) + ", expected " + std::to_string(want);
    }
    return bad;
}

// Levels 1.. of a float16 box chain built from `base` (level_image(l) reads level l) against
// the reference chain, bit for bit (half_mismatches).
inline void check_half_box_chain(const ImageF& base, uint32_t levels,
                                 const std::function<ImageF(uint32_t)>& level_image) {
    const auto reference = reference_mip_chain(base, Format::rgba16f, MipFilter::box, levels);
    for (uint32_t level = 1; level < levels; ++level) {
        CAPTURE(level);
        std::string first;
        CHECK_MESSAGE(half_mismatches(reference[level], level_image(level), &first) == 0, first);
    }
}

// Every level l >= 1 of one layer of a GPU chain against `filter`'s reference applied to
// the GPU's own level l-1 (so errors do not compound): box bit-exact for 8-bit formats and
// within one ulp for floats (box_filter.h); blit within tolerance.h's hardware bound (blit
// weights come from the sampler's coordinate hardware even on 2:1 ratios: lavapipe's
// rgba32f blits land ~1e-6 off an exact 0.5/0.5 mix). `level_image(l)` reads level l.
inline void check_levels(const std::function<ImageF(uint32_t)>& level_image, uint32_t levels, uint32_t width,
                         uint32_t height, Format format, MipFilter filter) {
    ImageF previous = level_image(0);
    for (uint32_t level = 1; level < levels; ++level) {
        CAPTURE(level);
        const ImageF actual = level_image(level);
        const ImageF expected = reference_downsample(previous, level_extent(width, height, level), filter, format);
        std::string first;
        const size_t bad = filter == MipFilter::box
                               ? box_mismatches(expected, actual, format, &first)
                               : mismatches(expected, actual, format, Weights::hardware, false, &first);
        CHECK_MESSAGE(bad == 0, bad, " texels differ; first: ", first);
        previous = actual;
    }
}

}  // namespace tvlm::test
