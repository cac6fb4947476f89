// RGBA16F levels that halve, texels as R32G32_UINT words (box_mips_words.glsl): each
// channel of a 2x2 block summed in double, rows first like the reference, divided, rounded
// to float and then to binary16 to nearest even: the arithmetic of box_mips.comp, the CUDA
// kernels and engine/mips/reference_mips.cpp. Two gathers (channels 0-1, then 2-3) read the
// block where box_mips.comp fetched four texels. Included by box_mips_rgba16f.comp, which
// rounds to binary16 in integer steps (round_to_half.glsl) and tests bits for infinities,
// and box_mips_rgba16f_rte.comp, which defines TVLM_HALF_CONVERSIONS: one conversion, IEEE
// infinities (Context::ieee_float16).
#extension GL_GOOGLE_include_directive : require
#define WORD uvec2
#define WORD_FORMAT rg32ui
#define WORD_PARTS 2
#include "box_mips_words.glsl"

#include "round_to_half.glsl"

// The non-finite kind (round_to_half.glsl) of binary16 bits, by bit tests.
uint half_kind(uint h) {
    if ((h & 0x7c00u) != 0x7c00u) return 0u;
    if ((h & 0x3ffu) != 0u) return kNotANumber;
    return (h & 0x8000u) != 0u ? kMinusInfinity : kPlusInfinity;
}

// Two channels (the halves of one 32-bit word) of texels (a, b) of one row and (c, d) of
// the next. unpackHalf2x16 reads binary16 exactly, subnormals too (the special-values test).
uint average_pair(uint a, uint b, uint c, uint d) {
    const dvec2 n = (dvec2(unpackHalf2x16(a)) + dvec2(unpackHalf2x16(b))) +
                    (dvec2(unpackHalf2x16(c)) + dvec2(unpackHalf2x16(d)));
    // n * 0.25 is n / 4 exactly, without a double division (which GPUs run as a sequence).
    const vec2 average = vec2(positive_zero(float(n.x * 0.25)), positive_zero(float(n.y * 0.25)));
#ifdef TVLM_HALF_CONVERSIONS
    // To binary16 to nearest even (RoundingModeRTE). Infinities and NaNs took part in the
    // arithmetic as IEEE says (SignedZeroInfNanPreserve), as they do in the reference.
    return packFloat2x16(f16vec2(average));
#else
    // packHalf2x16 writes binary16 exactly here: every value packed is one already.
    uint out_word = packHalf2x16(vec2(round_to_half(average.x), round_to_half(average.y)));
    // Infinities and NaNs: their average's bits replace what the arithmetic made of them.
    // One test first: an exponent field of 0x7c00 is the only one that carries into bit 15.
    const uint exponents = 0x7c007c00u, carry = 0x04000400u;
    if (((((a & exponents) + carry) | ((b & exponents) + carry) | ((c & exponents) + carry) |
          ((d & exponents) + carry)) & 0x80008000u) == 0u)
        return out_word;
    for (uint k = 0u; k < 2u; ++k) {
        const uint shift = 16u * k;
        const uint kinds = half_kind(a >> shift) | half_kind(b >> shift) | half_kind(c >> shift) | half_kind(d >> shift);
        if (kinds == 0u) continue;
        const uint bits = floatBitsToUint(non_finite_average(kinds));  // NaN, +inf or -inf as a float
        const uint half_bits = ((bits >> 16) & 0x8000u) | 0x7c00u | ((bits & 0x7fffffu) != 0u ? 0x200u : 0u);
        out_word = (out_word & (0xffff0000u >> shift)) | (half_bits << shift);
    }
    return out_word;
#endif
}

uvec2 average4(uvec2 a, uvec2 b, uvec2 c, uvec2 d) {
    return uvec2(average_pair(a.x, b.x, c.x, d.x), average_pair(a.y, b.y, c.y, d.y));
}

// Word `part` of the average, the other 0 (quad_average, WORD_PARTS).
uvec2 average4_part(uvec2 a, uvec2 b, uvec2 c, uvec2 d, uint part) {
    // The word picked before the arithmetic, which then runs once.
    bool low = part == 0u;
    uint word = average_pair(low ? a.x : a.y, low ? b.x : b.y, low ? c.x : c.y, low ? d.x : d.y);
    return low ? uvec2(word, 0u) : uvec2(0u, word);
}

// textureGather's order: (x, y+1), (x+1, y+1), (x+1, y), (x, y); one gather per word.
uvec2 gather_average(vec3 at) {
    uvec4 low = textureGather(src, at, 0), high = textureGather(src, at, 1);
    return average4(uvec2(low.w, high.w), uvec2(low.z, high.z), uvec2(low.x, high.x), uvec2(low.y, high.y));
}

uvec4 texel_of(uvec2 word) { return uvec4(word, 0u, 0u); }

#define BOX_WORDS_MAIN
#include "box_mips_words.glsl"
