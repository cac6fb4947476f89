#version 460
// The packed RGBA16F box shader, rounding to binary16 in integer steps (round_to_half.glsl)
// and finding infinities and NaNs by bit tests: for devices whose float16 conversions may
// not round to nearest even, or whose arithmetic may drop infinities (Context::ieee_float16).
#extension GL_GOOGLE_include_directive : require
#include "box_mips_rgba16f.glsl"
