#version 460
// sRGB8 levels that halve, texels as R32_UINT words (box_mips_words.glsl), the arithmetic of
// cuda/mips/box_mips.cu Srgb8Words: colour channels summed in 24-bit linear light and encoded
// back exactly with one table read (shaders/srgb8_buckets.h), alpha averaged as a byte
// (rounded half up). The exact box of engine/mips/box_filter.h. The general shader took ~8x the
// byte floor for this format: per channel a double division, a pow and a search.
#extension GL_GOOGLE_include_directive : require
#define WORD uint
#define WORD_FORMAT r32ui
#define WORD_TABLES
#define WORD_PARTS 4
// Bound by instruction issue (its table reads): the exchange before level a+1's stores
// (store_first_level) costs more than the quarter-sector stores it saves.
#define STORE_FIRST_AS_HELD
#include "box_mips_words.glsl"
#include "srgb8_tables.h"

// engine/mips/box_filter.h srgb8_tables() (srgb8_tables.h): 4 x the linear values and the
// carry words (then the thresholds, which this shader does not read), 16 bytes at a time.
layout(binding = 7, std430) readonly buffer SrgbTables { uvec4 srgb_chunks[]; };
shared uint linear4[256];
shared uint carry[TVLM_SRGB8_CARRY_WORDS];

// Chunk c of the buffer into its table: chunks 0-63 are the linear values, the rest of the
// TVLM_SRGB8_SHARED_CHUNKS the carry words (a warp's 32 chunks fall in one table). The
// CUDA kernel's word-at-a-time fill was 18% of its instructions.
void copy_chunk(uint c) {
    uvec4 v = srgb_chunks[c];
    if (c < 64u) {
        for (uint i = 0u; i < 4u; ++i) linear4[4u * c + i] = v[i];
    } else {
        for (uint i = 0u; i < 4u; ++i) carry[4u * (c - 64u) + i] = v[i];
    }
}

#if TVLM_SRGB8_SHARED_CHUNKS != 64 + TVLM_SRGB8_CARRY_WORDS / 4 || TVLM_SRGB8_SHARED_CHUNKS < TVLM_BOX_THREADS || TVLM_SRGB8_SHARED_CHUNKS > 2 * TVLM_BOX_THREADS
#error "prepare_tables copies the linear values and the carry words, one or two chunks a thread"
#endif
void prepare_tables() {
    uint t = gl_LocalInvocationIndex;
    copy_chunk(t);
    if (t + TVLM_BOX_THREADS < TVLM_SRGB8_SHARED_CHUNKS) copy_chunk(t + TVLM_BOX_THREADS);
    barrier();
}

// The encoded byte of channel `shift` / 8 of the average of four texels, at its place: m =
// 16 x the average, and the byte is the carry word of m's bucket plus m, shifted down
// (shaders/srgb8_buckets.h).
uint channel(uint a, uint b, uint c, uint d, uint shift) {
    uint m = linear4[(a >> shift) & 255u] + linear4[(b >> shift) & 255u] +
             linear4[(c >> shift) & 255u] + linear4[(d >> shift) & 255u];  // at most 2^28
    uint bucket = min(m >> 16, (m >> 19) + TVLM_SRGB8_CARRY_COARSE);
    return ((carry[bucket] + m) >> 24) << shift;
}

uint alpha_average(uint a, uint b, uint c, uint d) {
    return (((a >> 24) + (b >> 24) + (c >> 24) + (d >> 24) + 2u) >> 2) << 24;
}

uint average4(uint a, uint b, uint c, uint d) {
    return channel(a, b, c, d, 0u) | channel(a, b, c, d, 8u) | channel(a, b, c, d, 16u) | alpha_average(a, b, c, d);
}

// Channel `part` of the average (3: alpha), the other bits 0 (quad_average, WORD_PARTS).
uint average4_part(uint a, uint b, uint c, uint d, uint part) {
    uint colour = channel(a, b, c, d, 8u * min(part, 2u));  // one table walk, not a branch
    return part == 3u ? alpha_average(a, b, c, d) : colour;
}

#include "box_mips_uint_words.glsl"

#define BOX_WORDS_MAIN
#include "box_mips_words.glsl"
