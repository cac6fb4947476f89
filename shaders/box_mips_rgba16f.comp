#version 460
// RGBA16F levels that halve, texels as R32G32_UINT words (box_mips_words.glsl): each
// channel of a 2x2 block summed in double, rows first like the reference, divided, rounded
// to float and then to binary16 to nearest even: the arithmetic of box_mips.comp, the CUDA
// kernels and engine/reference_mips.cpp. Two gathers (channels 0-1, then 2-3) read the
// block where box_mips.comp fetched four texels.
#extension GL_GOOGLE_include_directive : require
#define WORD uvec2
#define WORD_FORMAT rg32ui
#include "box_mips_words.glsl"

#include "round_to_half.glsl"

// binary16 bits <-> float, exactly, subnormals included: unpackHalf2x16 and packHalf2x16
// may flush them (the GLSL spec allows it), where the texture keeps them.
float half_value(uint h) {
    const uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    float v = e == 0u ? float(m) * (1.0 / 16777216.0)
            : e == 31u ? uintBitsToFloat(m == 0u ? 0x7f800000u : 0x7fc00000u)
                       : uintBitsToFloat(((e + 112u) << 23) | (m << 13));
    return (h & 0x8000u) != 0u ? -v : v;
}
// `f` is a binary16 value already (round_to_half), an infinity or NaN.
uint half_bits(float f) {
    const uint u = floatBitsToUint(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) return sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u);
    if (a < 0x38800000u) return sign | uint(uintBitsToFloat(a) * 16777216.0);  // subnormal: a multiple of 2^-24
    return sign | ((a - 0x38000000u) >> 13);
}

// Two channels (the halves of one 32-bit word) of texels (a, b) of one row and (c, d) of the next.
uint average_pair(uint a, uint b, uint c, uint d) {
    uint out_word = 0u;
    for (uint k = 0u; k < 2u; ++k) {
        const uint shift = 16u * k;
        double n = (double(half_value(a >> shift)) + double(half_value(b >> shift))) +
                   (double(half_value(c >> shift)) + double(half_value(d >> shift)));
        out_word |= half_bits(round_to_half(float(n / 4.0))) << shift;
    }
    return out_word;
}

uvec2 average4(uvec2 a, uvec2 b, uvec2 c, uvec2 d) {
    return uvec2(average_pair(a.x, b.x, c.x, d.x), average_pair(a.y, b.y, c.y, d.y));
}

// textureGather's order: (x, y+1), (x+1, y+1), (x+1, y), (x, y); one gather per word.
uvec2 gather_average(vec3 at) {
    uvec4 low = textureGather(src, at, 0), high = textureGather(src, at, 1);
    return average4(uvec2(low.w, high.w), uvec2(low.z, high.z), uvec2(low.x, high.x), uvec2(low.y, high.y));
}

uvec4 texel_of(uvec2 word) { return uvec4(word, 0u, 0u); }

#define BOX_WORDS_MAIN
#include "box_mips_words.glsl"
