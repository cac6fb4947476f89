#version 460
// sRGB8 levels that halve, texels as R32_UINT words (box_mips_words.glsl), the arithmetic of
// cuda/mips/box_mips.cu Srgb8Words: colour channels summed in 24-bit linear light and encoded
// back exactly with two table reads (shaders/srgb8_buckets.h), alpha averaged as a byte
// (rounded half up). The exact box of engine/mips/box_filter.h. The general shader took ~8x the
// byte floor for this format: per channel a double division, a pow and a search.
#extension GL_GOOGLE_include_directive : require
#define WORD uint
#define WORD_FORMAT r32ui
#define WORD_TABLES
#define WORD_PARTS 4
// Bound by instruction issue (its table reads): the exchange before level a+1's stores
// (store_first_level) costs more than the quarter-sector stores it saves (H100, 4096^2:
// 46.9 -> 48.0 us with it).
#define STORE_FIRST_AS_HELD
#include "box_mips_words.glsl"
#include "srgb8_tables.h"

// engine/mips/box_filter.h srgb8_tables(): 256 linear values, 255 thresholds, the bucket words.
layout(binding = 7, std430) readonly buffer SrgbTables { uint srgb_tables[]; };
shared uint linear_table[256];
shared uint threshold4[256];  // 4 x each threshold, then one no sum (below 2^26) reaches
shared uint bucket_words[TVLM_SRGB8_BUCKET_WORDS];

void prepare_tables() {
    uint t = gl_LocalInvocationIndex;
    linear_table[t] = srgb_tables[t];
    threshold4[t] = t < 255u ? 4u * srgb_tables[256u + t] : 0xffffffffu;
    for (uint i = t; i < TVLM_SRGB8_BUCKET_WORDS; i += TVLM_BOX_THREADS)
        bucket_words[i] = srgb_tables[TVLM_SRGB8_TABLE_WORDS + i];
    barrier();
}

// The encoded byte of channel `shift` / 8 of the average of four texels, at its place.
uint channel(uint a, uint b, uint c, uint d, uint shift) {
    uint n = linear_table[(a >> shift) & 255u] + linear_table[(b >> shift) & 255u] +
             linear_table[(c >> shift) & 255u] + linear_table[(d >> shift) & 255u];  // below 2^26
    // Bucket n >> 14: byte (n >> 14) & 3 of word n >> 16, at bit 8 x that = (n >> 11) & 24.
    uint byte = (bucket_words[n >> 16] >> ((n >> 11) & 24u)) & 255u;
    return (byte + uint(n >= threshold4[byte])) << shift;  // byte 255: never above
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
