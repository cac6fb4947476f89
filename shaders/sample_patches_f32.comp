#version 460
// Patch sampling into float32 output.
#define OUTPUT_T float
#include "sample_patches.glsl"
