// make_divisor() (shaders/shader_params.h) and the 32-bit division divide.glsl does with
// it: every quotient equals n / d, for divisors 1..4096 and around powers of two, and
// numerators at both ends of 32 bits. cuda/fast_divmod.h divides with the same numbers
// in 64-bit arithmetic; both are checked here against the hardware's division.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "shaders/shader_params.h"

namespace {

// divide.glsl in C++: (hi + ((n - hi) >> 1)) >> (shift - 1), hi = mulhi(n, multiplier).
uint32_t divide_32(uint32_t n, tvlm::gpu::DivisorGpu d) {
    if (d.shift == 0) return n;
    const auto hi = static_cast<uint32_t>((uint64_t{n} * d.multiplier) >> 32);
    return (hi + ((n - hi) >> 1)) >> (d.shift - 1);
}

// cuda/fast_divmod.h: (hi + n) >> shift in 64 bits.
uint32_t divide_64(uint32_t n, tvlm::gpu::DivisorGpu d) {
    const uint64_t hi = (uint64_t{n} * d.multiplier) >> 32;
    return static_cast<uint32_t>((hi + n) >> d.shift);
}

}  // namespace

TEST_CASE("make_divisor's multiplier and shift divide every 32-bit numerator exactly") {
    std::vector<uint32_t> divisors;
    for (uint32_t d = 1; d <= 4096; ++d) divisors.push_back(d);
    for (uint32_t b = 12; b < 32; ++b)
        for (uint32_t d : {(1u << b) - 1, 1u << b, (1u << b) + 1}) divisors.push_back(d);
    divisors.push_back(UINT32_MAX);
    std::mt19937 random(5);
    for (uint32_t d : divisors) {
        CAPTURE(d);
        const tvlm::gpu::DivisorGpu divisor = tvlm::gpu::make_divisor(d);
        std::vector<uint32_t> numerators = {
            0, 1, d - 1, d, d + 1, UINT32_MAX, UINT32_MAX - 1, UINT32_MAX / d * d, UINT32_MAX / d * d - 1};
        for (int i = 0; i < 200; ++i) numerators.push_back(static_cast<uint32_t>(random()));
        size_t wrong = 0;
        for (uint32_t n : numerators)
            if (divide_32(n, divisor) != n / d || divide_64(n, divisor) != n / d) ++wrong;
        CHECK(wrong == 0);
    }
}
