#version 460
// The packed RGBA16F box shader, rounding to binary16 in one conversion: float16 types
// (shaderFloat16) whose conversions round to nearest even (RoundingModeRTE for 16 bits, an
// execution mode of SPV_KHR_float_controls: 4462 with capability 4467), where integer
// steps took ~10 instructions a channel (Context::half_conversions).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
#define TVLM_HALF_CONVERSIONS
#include "box_mips_rgba16f.glsl"
