#include "engine/textures/half.h"

#include <bit>

namespace tvlm {

uint16_t float_to_half(float value) {
    const uint32_t f = std::bit_cast<uint32_t>(value);
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t abs = f & 0x7fffffffu;
    if (abs >= 0x7f800000u)  // inf or nan (keep nan quiet and non-zero)
        return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    if (abs >= 0x477ff000u)  // rounds to a value above 65504: overflow to inf
        return static_cast<uint16_t>(sign | 0x7c00u);
    if (abs < 0x38800000u) {  // subnormal half (or zero): scale by 2^24 with rounding
        const float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // exact: power of two
        // Rounding of scaled to an integer, half to even, via the float add trick.
        const float rounded = (scaled + 8388608.0f) - 8388608.0f;
        return static_cast<uint16_t>(sign | static_cast<uint32_t>(rounded));
    }
    // Normal: rebias exponent, round mantissa from 23 to 10 bits, half to even.
    const uint32_t mantissa_odd = (abs >> 13) & 1u;
    const uint32_t rounded = abs + 0xfffu + mantissa_odd;
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

float half_to_float(uint16_t bits) {
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    const uint32_t exponent = (bits >> 10) & 0x1fu;
    const uint32_t mantissa = bits & 0x3ffu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
        const float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

}  // namespace tvlm
