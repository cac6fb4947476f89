#version 460
// Patch sampling into float16 output (needs storageBuffer16BitAccess).
#extension GL_EXT_shader_16bit_storage : require
#define OUTPUT_T float16_t
#include "sample_patches.glsl"
