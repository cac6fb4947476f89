#version 460
// The overlay's shading pass for RGBA8 frames (UNORM or sRGB): overlay_shade.glsl.
#extension GL_GOOGLE_include_directive : require
#include "overlay_shade.glsl"
