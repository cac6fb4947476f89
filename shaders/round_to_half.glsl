// The value a float16 texel stores for f, rounded to nearest even here (as a float):
// NVIDIA's packHalf2x16 was seen to round differently from CUDA and the reference, so the
// box shaders round first (box_mips.comp, box_mips_rgba16f.comp).
float round_to_half(float f) {
    if (isnan(f) || abs(f) >= 65520.0) return f * uintBitsToFloat(0x7f800000u);  // NaN stays, overflow: inf
    if (abs(f) < 6.103515625e-05) return roundEven(f * 16777216.0) / 16777216.0;  // subnormal: steps of 2^-24
    uint u = floatBitsToUint(f);
    return uintBitsToFloat((u + 0x0FFFu + ((u >> 13) & 1u)) & ~0x1FFFu);  // keep 10 mantissa bits
}
