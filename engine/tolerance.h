#pragma once
// The one place where agreement between GPU results and the CPU reference is defined.
//
// Texture units filter with 9-bit fixed-point weights, 8 fractional bits (CUDA guide,
// texture fetching appendix; the same class of hardware serves Vulkan): a bilinear weight
// is off by at most half a step, 1/512, per axis, so a filtered value in [0,1] is off by
// at most 2 * 1/512 = 1/256 (two axes). Where weights are exact (ratios of 2 give weights
// of 0.5; compute shaders use float weights) only the storage format's rounding remains.
#include "format.h"

namespace tvlm {

inline constexpr double kWeightStep = 1.0 / 256.0;                    // 8 fractional bits
inline constexpr double kHardwareWeightError = 2.0 * (kWeightStep / 2.0);  // two axes

enum class Weights { exact, hardware };

// |actual - expected| a texel value in [0,1] may differ by: the weight error plus one step
// of the stored format at that value (8-bit: 1/255; f16: one ulp; f32: four ulps, one per
// tap of a bilinear sample). sRGB colour channels are compared in linear light.
bool texel_matches(Format format, bool colour_channel, double expected, double actual, Weights weights);

}  // namespace tvlm
