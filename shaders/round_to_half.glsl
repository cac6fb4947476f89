// Infinities and NaNs never enter the box shaders' arithmetic: Vulkan lets an
// implementation drop them there unless the SignedZeroInfNanPreserve mode is on, and
// NVIDIA's did (the float16 test of infinite texels failed there). Bit tests find
// them, and the result is built from bits as IEEE arithmetic and the reference give it:
// NaN if any input is NaN or both infinities meet, else the infinity that is there.
const uint kPlusInfinity = 1u, kMinusInfinity = 2u, kNotANumber = 4u;
uint non_finite_kind(float f) {
    uint u = floatBitsToUint(f), a = u & 0x7fffffffu;
    if (a < 0x7f800000u) return 0u;
    if (a > 0x7f800000u) return kNotANumber;
    return (u >> 31) != 0u ? kMinusInfinity : kPlusInfinity;
}
// The average of inputs whose non_finite_kind()s, or-ed, are `kinds` (not 0).
float non_finite_average(uint kinds) {
    if ((kinds & kNotANumber) != 0u || kinds == (kPlusInfinity | kMinusInfinity)) return uintBitsToFloat(0x7fc00000u);
    return uintBitsToFloat(kinds == kPlusInfinity ? 0x7f800000u : 0xff800000u);
}

// The value a float16 texel stores for a finite f, rounded to nearest even here (as a
// float): NVIDIA's packHalf2x16 was seen to round differently from CUDA and the reference,
// so the box shaders round first (box_mips.comp, box_mips_rgba16f.comp).
float round_to_half(float f) {
    uint u = floatBitsToUint(f);
    if ((u & 0x7fffffffu) >= 0x477ff000u) return uintBitsToFloat((u & 0x80000000u) | 0x7f800000u);  // overflow: inf
    if (abs(f) < 6.103515625e-05) return roundEven(f * 16777216.0) / 16777216.0;  // subnormal: steps of 2^-24
    return uintBitsToFloat((u + 0x0FFFu + ((u >> 13) & 1u)) & ~0x1FFFu);  // keep 10 mantissa bits
}

// A float level's average with a zero made +0: the reference's sums start at 0, so four
// -0s average to +0, where a 2:1 step's (a + b) + (c + d) gives -0. Cleared by bits: a
// compiler may drop a float "+ 0.0".
float positive_zero(float f) {
    const uint bits = floatBitsToUint(f);
    return uintBitsToFloat((bits & 0x7fffffffu) == 0u ? 0u : bits);
}
