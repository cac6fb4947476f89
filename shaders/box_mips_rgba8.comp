#version 460
// RGBA8 levels that halve, texels as R32_UINT words (box_mips_words.glsl; box_mips.comp
// does every other case; cuda/mips/box_mips.cu box_packed_kernel computes the same words with
// warp shuffles): all four channels average at once, bytes 0 and 2 (then 1 and 3) summed
// in two 16-bit lanes, rounded half up as (sum + 2) >> 2, the exact box of
// engine/mips/box_filter.h.
#extension GL_GOOGLE_include_directive : require
#define WORD uint
#define WORD_FORMAT r32ui
#include "box_mips_words.glsl"

uint average4(uint a, uint b, uint c, uint d) {
    const uint m = 0x00ff00ffu;
    uint even = (a & m) + (b & m) + (c & m) + (d & m);
    uint odd = ((a >> 8) & m) + ((b >> 8) & m) + ((c >> 8) & m) + ((d >> 8) & m);
    return (((even + 0x00020002u) >> 2) & m) | ((((odd + 0x00020002u) >> 2) & m) << 8);
}

#include "box_mips_uint_words.glsl"

#define BOX_WORDS_MAIN
#include "box_mips_words.glsl"
