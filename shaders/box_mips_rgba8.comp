#version 460
// RGBA8 levels that halve, with texels packed in words (box_mips.comp does every other
// case; cuda/box_mips.cu box_packed_kernel computes the same words with warp shuffles):
// all four channels average at once, bytes 0 and 2 (then 1 and 3) summed in two 16-bit
// lanes, rounded half up as (sum + 2) >> 2, the exact box of engine/box_filter.h.
// The levels are seen as R32_UINT words (Texture::level_view *_words): one textureGather
// reads the 2x2 texels a texel of level a+1 averages, where texelFetch read one texel and
// converted it to floats and back. Each invocation computes four texels of level a+1 in a
// row; deeper levels halve in shared memory; every image store comes after the last barrier.
#extension GL_GOOGLE_include_directive : require
#include "shader_params.h"

layout(local_size_x = TVLM_BOX_THREADS) in;

// The pipeline layout of box_mips_bindings.glsl, with word views bound.
layout(binding = 0) uniform usampler2DArray src;  // level a, nearest, clamped
layout(binding = 1, r32ui) writeonly uniform uimage2DArray dst1;  // level a+1
layout(binding = 2, r32ui) writeonly uniform uimage2DArray dst2;
layout(binding = 3, r32ui) writeonly uniform uimage2DArray dst3;
layout(binding = 4, r32ui) writeonly uniform uimage2DArray dst4;
layout(binding = 5, r32ui) writeonly uniform uimage2DArray dst5;
layout(binding = 6, r32ui) writeonly uniform uimage2DArray dst6;  // level a+6
layout(push_constant) uniform Push { BoxMipsParams p; };

void store_level(uint step, ivec3 at, uint word) {
    const uvec4 v = uvec4(word, 0u, 0u, 0u);
    switch (step) {
        case 1u: imageStore(dst1, at, v); break;
        case 2u: imageStore(dst2, at, v); break;
        case 3u: imageStore(dst3, at, v); break;
        case 4u: imageStore(dst4, at, v); break;
        case 5u: imageStore(dst5, at, v); break;
        default: imageStore(dst6, at, v); break;
    }
}

const uint kTile = TVLM_BOX_TILE;
shared uint level1[kTile * kTile];
shared uint deeper[(kTile * kTile - 1u) / 3u];  // levels a+2 .. a+6, one after another

uint average4(uint a, uint b, uint c, uint d) {
    const uint m = 0x00ff00ffu;
    uint even = (a & m) + (b & m) + (c & m) + (d & m);
    uint odd = ((a >> 8) & m) + ((b >> 8) & m) + ((c >> 8) & m) + ((d >> 8) & m);
    return (((even + 0x00020002u) >> 2) & m) | ((((odd + 0x00020002u) >> 2) & m) << 8);
}

void main() {
    uint t = gl_LocalInvocationIndex;
    uint layer = gl_WorkGroupID.z + p.first_layer;
    uvec2 tile = gl_WorkGroupID.xy + uvec2(p.tile_x, p.tile_y);
    uvec2 size = uvec2(p.src_width / 2u, p.src_height / 2u);  // level a+1
    uint lx = (t % (kTile / 4u)) * 4u, ly = t / (kTile / 4u);
    uvec2 at = tile * kTile + uvec2(lx, ly);
    // The centre of source texels (2x, 2y) .. (2x + 1, 2y + 1): a gather there returns the four.
    vec2 texel_size = vec2(1.0) / vec2(p.src_width, p.src_height);

    uvec4 first = uvec4(0u);
    for (uint i = 0u; i < 4u; ++i) {
        if (at.x + i < size.x && at.y < size.y) {
            uvec4 g = textureGather(src, vec3(vec2(2u * (at.x + i) + 1u, 2u * at.y + 1u) * texel_size, float(layer)), 0);
            first[i] = average4(g.x, g.y, g.z, g.w);
        }
        level1[ly * kTile + lx + i] = first[i];
    }

    uint edge = kTile, offset = 0u;
    for (uint step = 2u; step <= p.levels; ++step) {
        barrier();
        uint half_edge = edge / 2u;
        if (t < half_edge * half_edge) {
            uint i = 2u * (t / half_edge) * edge + 2u * (t % half_edge);
            deeper[offset + t] = step == 2u
                ? average4(level1[i], level1[i + 1u], level1[i + edge], level1[i + edge + 1u])
                : average4(deeper[offset - edge * edge + i], deeper[offset - edge * edge + i + 1u],
                           deeper[offset - edge * edge + i + edge], deeper[offset - edge * edge + i + edge + 1u]);
        }
        offset += half_edge * half_edge;
        edge = half_edge;
    }
    barrier();

    for (uint i = 0u; i < 4u; ++i)
        if (at.x + i < size.x && at.y < size.y) store_level(1u, ivec3(at.x + i, at.y, layer), first[i]);
    edge = kTile;
    offset = 0u;
    for (uint step = 2u; step <= p.levels; ++step) {
        size >>= 1;
        edge /= 2u;
        if (t < edge * edge) {
            uvec2 texel = tile * edge + uvec2(t % edge, t / edge);
            if (all(lessThan(texel, size))) store_level(step, ivec3(texel, layer), deeper[offset + t]);
        }
        offset += edge * edge;
    }
}
