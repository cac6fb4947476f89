#version 460
// The overlay's shading pass for RGBA16F frames: overlay_shade.glsl with half texels.
#extension GL_GOOGLE_include_directive : require
#define TVLM_OVERLAY_F16 1
#include "overlay_shade.glsl"
