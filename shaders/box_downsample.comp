#version 460
// One mip level of the `box` filter: each destination texel is the exact area-weighted
// average of the source texels it covers (reference_mips.cpp is the definition).
#extension GL_GOOGLE_include_directive : require
#include "shader_params.h"

layout(local_size_x = TVLM_BOX_GROUP_SIZE, local_size_y = TVLM_BOX_GROUP_SIZE, local_size_z = 1) in;

layout(binding = 0) uniform sampler2DArray src;           // level l-1; sRGB views decode
layout(binding = 1) writeonly uniform image2DArray dst;   // level l; UNORM view for sRGB

layout(push_constant) uniform Push { BoxDownsampleParams p; };

float linear_to_srgb(float l) {
    return l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
}

// In units of 1/d source texels, source texel j spans [j*d, (j+1)*d] and destination
// texel i spans [i*s, (i+1)*s]: overlaps are whole numbers that sum to s.
float overlap(uint i, uint j, uint s, uint d) {
    uint lo = max(i * s, j * d), hi = min((i + 1) * s, (j + 1) * d);
    return hi > lo ? float(hi - lo) : 0.0;
}

void main() {
    uvec3 id = gl_GlobalInvocationID;
    if (id.x >= p.dst_width || id.y >= p.dst_height) return;
    uint x0 = id.x * p.src_width / p.dst_width, y0 = id.y * p.src_height / p.dst_height;
    uint x1 = min(((id.x + 1) * p.src_width - 1) / p.dst_width, p.src_width - 1);
    uint y1 = min(((id.y + 1) * p.src_height - 1) / p.dst_height, p.src_height - 1);
    bool bytes = p.unorm8 != 0u && p.srgb == 0u;
    vec4 sum = vec4(0.0);
    for (uint y = y0; y <= y1; ++y) {
        float wy = overlap(id.y, y, p.src_height, p.dst_height) / float(p.src_height);
        for (uint x = x0; x <= x1; ++x) {
            float w = wy * overlap(id.x, x, p.src_width, p.dst_width) / float(p.src_width);
            vec4 texel = texelFetch(src, ivec3(x, y, id.z), 0);
            // UNORM8 in whole byte units: 2x2 boxes are then exact and ties round one way.
            if (bytes) texel = round(texel * 255.0);
            sum += w * texel;
        }
    }
    if (p.srgb != 0u) {
        sum.rgb = vec3(linear_to_srgb(sum.r), linear_to_srgb(sum.g), linear_to_srgb(sum.b));
        sum = floor(clamp(sum, 0.0, 1.0) * 255.0 + 0.5) / 255.0;
    }
    if (bytes) sum = floor(sum + 0.5) / 255.0;
    imageStore(dst, ivec3(id), sum);
}
