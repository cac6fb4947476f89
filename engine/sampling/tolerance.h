#pragma once
// The one place where agreement between GPU results and the CPU reference is defined.
//
// Texture units filter with 9-bit fixed-point weights, 8 fractional bits (CUDA guide,
// texture fetching appendix; the same hardware serves Vulkan blits and samplers): a
// bilinear weight is off by up to one step, 1/256, per axis (truncation, not rounding:
// NVIDIA blits of rgba32f values in [0,1] were seen 0.00402 off, more than half a step
// allows), so a filtered value in [0,1] is off by at most 2 * 1/256 (two axes). Where
// weights are exact (box compute shaders use float weights) only the storage format's
// rounding remains.
#include "engine/textures/format.h"

namespace tvlm {

inline constexpr double kWeightStep = 1.0 / 256.0;                 // 8 fractional bits
inline constexpr double kHardwareWeightError = 2.0 * kWeightStep;  // one step, two axes

enum class Weights { exact, hardware };

// |actual - expected| a texel value in [0,1] may differ by: the weight error plus one step
// of the stored format at that value (8-bit: 1/255; f16: one ulp; f32: four ulps, one per
// tap of a bilinear sample). sRGB colour channels are compared in linear light.
// Patch samples (values in [0,1]) against reference_sample_patches(): trilinear filtering
// has two bilinear weights per level and one weight between levels, each off by up to one
// step: 3 steps. With gradients the unit also computes the LOD itself (8 fractional bits):
// one more step. float16 output adds half an ulp of the value.
inline constexpr double kSampleWeightError = 3.0 * kWeightStep;
inline constexpr double kGradientSampleError = 4.0 * kWeightStep;
double sample_tolerance(bool gradients, bool half_output, double value);

bool texel_matches(Format format, bool colour_channel, double expected, double actual, Weights weights);

}  // namespace tvlm
