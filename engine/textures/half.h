#pragma once
// IEEE 754 binary16 conversion, round to nearest even (what GPUs do when storing f16).
#include <cstdint>

namespace tvlm {

uint16_t float_to_half(float value);
float half_to_float(uint16_t bits);

}  // namespace tvlm
