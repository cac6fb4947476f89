#pragma once
// Compares sampler output with the CPU reference within the one sampling tolerance.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/textures/half.h"
#include "engine/sampling/tolerance.h"

namespace tvlm::test {

// Output bytes as floats (float32, or float16 widened).
inline std::vector<float> output_values(const void* data, size_t count, bool half) {
    std::vector<float> values(count);
    if (!half) {
        std::memcpy(values.data(), data, count * sizeof(float));
    } else {
        const auto* h = static_cast<const uint16_t*>(data);
        for (size_t i = 0; i < count; ++i) values[i] = half_to_float(h[i]);
    }
    return values;
}

// Number of values off by more than sample_tolerance(); reports the worst one.
inline size_t sample_mismatches(const std::vector<float>& expected, const std::vector<float>& actual, bool gradients,
                                bool half) {
    REQUIRE(expected.size() == actual.size());
    size_t bad = 0, worst_index = 0;
    double worst = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
        const double err = std::fabs(double(expected[i]) - double(actual[i]));
        if (!(err <= sample_tolerance(gradients, half, expected[i]))) ++bad;  // NaN (poison) counts
        if (!(err <= worst)) worst = err, worst_index = i;
    }
    if (bad)
        MESSAGE("worst value " << worst_index << ": expected " << expected[worst_index] << ", got "
                               << actual[worst_index]);
    return bad;
}

}  // namespace tvlm::test
