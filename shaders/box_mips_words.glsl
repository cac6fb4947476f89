// The packed box shaders (box_mips_rgba8.comp, box_mips_srgb8.comp, box_mips_rgba16f.comp):
// levels that halve, every texel one word (WORD: uint for RGBA8 and sRGB8, uvec2 for
// RGBA16F) read and written through word views of the levels (Texture::level_view *_words).
// One textureGather per component word reads the 2x2 texels a texel of level a+1 averages.
// The layout of cuda/mips/box_mips.cu's packed kernel: each invocation reads a 4x4 block of level
// a and averages its 2x2 texels of a+1 and one of a+2 in registers; invocations in Morton
// order make each quad a 2x2 block of a+2, so a+3 comes from quad broadcasts, and only the
// 64 texels of a+3 (then the 4 of a+5) go through shared memory, two barriers, for
// a+4..a+6. Each texel is stored as soon as it is known. The pipeline requires full
// subgroups of 8 or more with quad and shuffle operations (Context::subgroup_shuffles).
// The including file defines WORD, WORD_FORMAT, then, after
// including this file's first part, average4(a, b, c, d) over the texels of rows (a, b)
// and (c, d), gather_average(at) and texel_of(word) (what imageStore takes), then defines
// BOX_WORDS_MAIN and includes it again for main(). A file that defines WORD_TABLES also
// defines prepare_tables(), which main() calls first (it ends with a barrier). A file that
// defines WORD_PARTS (2 or 4: a word's arithmetic is long) also defines
// average4_part(a, b, c, d, part): part `part` of the average, its other bits 0.
#ifndef BOX_WORDS_MAIN
#include "shader_params.h"
#if TVLM_BOX_THREADS != 256 || TVLM_BOX_TILE != 32
#error "main() maps 256 invocations onto the 16x16 texels of level a+2 of a 32x32 tile of a+1"
#endif

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_quad : require
#extension GL_KHR_shader_subgroup_shuffle : require

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

const uint kTile = TVLM_BOX_TILE;  // level a+1's side of the workgroup's tile
shared WORD level3[(kTile / 4u) * (kTile / 4u)];  // level a+3, in Morton order
shared WORD level5[4];                          // level a+5

// Invocation t's place in a 16x16 grid (the tile at level a+2): x from t's even bits, y
// from its odd bits (Morton order), so the lanes of a quad hold a 2x2 block and t >> 2k
// is the block's index k levels further down.
uvec2 morton(uint t) {
    uvec2 v = uvec2(t, t >> 1) & 0x55u;
    v = (v | (v >> 1)) & 0x33u;
    return (v | (v >> 2)) & 0x0fu;
}

// The average of the quad's four words: (x, y), (x+1, y), (x, y+1), (x+1, y+1) in lane
// order, in every lane of the quad. With WORD_PARTS, each lane works out part (lane % parts)
// of it and the quad ors the parts together, where each lane had done the whole (RGBA8's
// arithmetic is a few instructions: whole).
WORD quad_average(WORD w) {
    WORD a = subgroupQuadBroadcast(w, 0u), b = subgroupQuadBroadcast(w, 1u), c = subgroupQuadBroadcast(w, 2u),
         d = subgroupQuadBroadcast(w, 3u);
#ifndef WORD_PARTS
    return average4(a, b, c, d);
#else
    WORD part = average4_part(a, b, c, d, (gl_SubgroupInvocationID & 3u) % WORD_PARTS);
    part |= subgroupQuadSwapHorizontal(part);  // lanes 0 and 1, 2 and 3
#if WORD_PARTS == 4
    part |= subgroupQuadSwapVertical(part);  // lanes 0 and 2, 1 and 3
#endif
    return part;
#endif
}

void store_if_inside(uint step, uvec2 texel, uint layer, WORD word) {
    uvec2 size = uvec2(p.src_width, p.src_height) >> step;  // every level of the pass halves exactly
    if (step <= p.levels && all(lessThan(texel, size))) store_level(step, ivec3(texel, layer), word);
}

// Level a+1. A sector of an image's optimal tiling on NVIDIA GPUs is 16 bytes of two
// neighbouring rows, and a store instruction costs an L2 transaction per sector it touches.
// Stored as held (register j: texel (j & 1, j >> 1) of the invocation's 2x2), each store
// would write every other column of every other row: a quarter of each sector. So lane
// bits 1 and 2 trade places with the register's bits 0 and 1 (two exchanges of two
// shuffles). Then in store k, lane bits 1, 0 and 2 give x bits 0 and 1 and y bit 0 of the
// texel of level a+1, so each eight lanes write a 4x2 block: whole sectors of 4- and
// 8-byte texels. A
// file that defines STORE_FIRST_AS_HELD stores without the exchange.
void store_first_level(WORD first[4], uint t, uvec2 tile, uint layer) {
    // Selects rather than indices that vary by lane, so the array stays in registers.
    const bool odd1 = (t & 2u) != 0u, odd2 = (t & 4u) != 0u;
    WORD got0 = subgroupShuffleXor(odd1 ? first[0] : first[1], 2u);  // register bit 0 <-> lane bit 1
    WORD got2 = subgroupShuffleXor(odd1 ? first[2] : first[3], 2u);
    WORD w[4] = WORD[4](odd1 ? got0 : first[0], odd1 ? first[1] : got0, odd1 ? got2 : first[2], odd1 ? first[3] : got2);
    got0 = subgroupShuffleXor(odd2 ? w[0] : w[2], 4u);  // register bit 1 <-> lane bit 2
    WORD got1 = subgroupShuffleXor(odd2 ? w[1] : w[3], 4u);
    first = WORD[4](odd2 ? got0 : w[0], odd2 ? got1 : w[1], odd2 ? w[2] : got0, odd2 ? w[3] : got1);
    // Register k now holds the texel of the lane whose bits 1 and 2 are k's bits 0 and 1
    // (its a+2 texel 1 row and 2 columns on per bit), at place (lane bit 1, lane bit 2) of
    // that lane's 2x2.
    const uvec2 at1 = 2u * (tile * (kTile / 2u) + morton(t & ~6u)) + uvec2((t >> 1) & 1u, (t >> 2) & 1u);
    for (uint k = 0u; k < 4u; ++k) store_if_inside(1u, at1 + uvec2(4u * (k >> 1), 2u * (k & 1u)), layer, first[k]);
}

void main() {
#ifdef WORD_TABLES
    prepare_tables();
#endif
    // Full subgroups (the pipeline requires them): this is a bijection onto 0..255 whose
    // quads are consecutive, whatever order the implementation packs invocations in.
    uint t = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    uint layer = gl_WorkGroupID.z + p.first_layer;
    uvec2 tile = gl_WorkGroupID.xy + uvec2(p.tile_x, p.tile_y);
    uvec2 at2 = tile * (kTile / 2u) + morton(t);  // this invocation's texel of level a+2
    // The centre of source texels (2x, 2y) .. (2x + 1, 2y + 1): a gather there returns the four.
    vec2 texel_size = vec2(1.0) / vec2(p.src_width, p.src_height);

    // Its 2x2 texels of level a+1 (a 4x4 block of level a), then a+2 and a+3 in registers.
    // Texels past the level's edge are never stored and feed only texels past the edge.
    WORD first[4];
    for (uint j = 0u; j < 4u; ++j) {
        uvec2 at1 = 2u * at2 + uvec2(j & 1u, j >> 1);
        first[j] = gather_average(vec3(vec2(2u * at1 + 1u) * texel_size, float(layer)));
#ifdef STORE_FIRST_AS_HELD
        store_if_inside(1u, at1, layer, first[j]);
#endif
    }
#ifndef STORE_FIRST_AS_HELD
    store_first_level(first, t, tile, layer);
#endif
    WORD second = average4(first[0], first[1], first[2], first[3]);
    store_if_inside(2u, at2, layer, second);
    WORD third = quad_average(second);
    if ((t & 3u) == 0u) {
        level3[t >> 2] = third;
        store_if_inside(3u, at2 >> 1, layer, third);
    }
    barrier();
    if (t < 16u) {  // whole quads: the 4x4 texels of level a+4, then a+5 by quads
        WORD fourth = average4(level3[4u * t], level3[4u * t + 1u], level3[4u * t + 2u], level3[4u * t + 3u]);
        store_if_inside(4u, tile * (kTile / 8u) + morton(t), layer, fourth);
        WORD fifth = quad_average(fourth);
        if ((t & 3u) == 0u) {
            level5[t >> 2] = fifth;
            store_if_inside(5u, tile * (kTile / 16u) + morton(t >> 2), layer, fifth);
        }
    }
    barrier();
    if (t == 0u) store_if_inside(6u, tile, layer, average4(level5[0], level5[1], level5[2], level5[3]));
}

#endif
