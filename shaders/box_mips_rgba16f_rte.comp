#version 460
// The packed RGBA16F box shader for devices with float controls (Context::ieee_float16):
// - float16 types (shaderFloat16) whose conversions round to nearest even (RoundingModeRTE
//   for 16 bits: execution mode 4462, capability 4467), so a channel rounds to binary16 in
//   one conversion where round_to_half's integer steps took ~10 instructions;
// - infinities and NaNs kept through the arithmetic as IEEE says (SignedZeroInfNanPreserve:
//   4461, capability 4466, for 16, 32 and 64 bits), so no bit tests look for them.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4466], 4461, 16);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4466], 4461, 32);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4466], 4461, 64);
#define TVLM_HALF_CONVERSIONS
#include "box_mips_rgba16f.glsl"
