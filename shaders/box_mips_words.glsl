// The packed box shaders (box_mips_rgba8.comp, box_mips_srgb8.comp, box_mips_rgba16f.comp):
// levels that halve, every texel one word (WORD: uint for RGBA8 and sRGB8, uvec2 for
// RGBA16F) read and written through word views of the levels (Texture::level_view *_words). One textureGather per component
// word reads the 2x2 texels a texel of level a+1 averages. Each invocation computes four
// texels of level a+1 in a row; deeper levels halve in shared memory; every image store
// comes after the last barrier. The including file defines WORD, WORD_FORMAT, then, after
// including this file's first part, average4(a, b, c, d) over the texels of rows (a, b)
// and (c, d), gather_average(at) and texel_of(word) (what imageStore takes), then defines
// BOX_WORDS_MAIN and includes it again for main(). A file that defines WORD_TABLES also
// defines prepare_tables(), which main() calls first (it ends with a barrier).
#ifndef BOX_WORDS_MAIN
#include "shader_params.h"

layout(local_size_x = TVLM_BOX_THREADS) in;

// The pipeline layout of box_mips_bindings.glsl, with word views bound.
layout(binding = 0) uniform usampler2DArray src;  // level a, nearest, clamped
layout(binding = 1, WORD_FORMAT) writeonly uniform uimage2DArray dst1;  // level a+1
layout(binding = 2, WORD_FORMAT) writeonly uniform uimage2DArray dst2;
layout(binding = 3, WORD_FORMAT) writeonly uniform uimage2DArray dst3;
layout(binding = 4, WORD_FORMAT) writeonly uniform uimage2DArray dst4;
layout(binding = 5, WORD_FORMAT) writeonly uniform uimage2DArray dst5;
layout(binding = 6, WORD_FORMAT) writeonly uniform uimage2DArray dst6;  // level a+6
layout(push_constant) uniform Push { BoxMipsParams p; };

#else

void store_level(uint step, ivec3 at, WORD word) {
    const uvec4 v = texel_of(word);
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
shared WORD level1[kTile * kTile];
shared WORD deeper[(kTile * kTile - 1u) / 3u];  // levels a+2 .. a+6, one after another

void main() {
#ifdef WORD_TABLES
    prepare_tables();
#endif
    uint t = gl_LocalInvocationIndex;
    uint layer = gl_WorkGroupID.z + p.first_layer;
    uvec2 tile = gl_WorkGroupID.xy + uvec2(p.tile_x, p.tile_y);
    uvec2 size = uvec2(p.src_width / 2u, p.src_height / 2u);  // level a+1
    uint lx = (t % (kTile / 4u)) * 4u, ly = t / (kTile / 4u);
    uvec2 at = tile * kTile + uvec2(lx, ly);
    // The centre of source texels (2x, 2y) .. (2x + 1, 2y + 1): a gather there returns the four.
    vec2 texel_size = vec2(1.0) / vec2(p.src_width, p.src_height);

    WORD first[4];
    for (uint i = 0u; i < 4u; ++i) {
        first[i] = WORD(0u);
        if (at.x + i < size.x && at.y < size.y)
            first[i] = gather_average(vec3(vec2(2u * (at.x + i) + 1u, 2u * at.y + 1u) * texel_size, float(layer)));
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

#endif
