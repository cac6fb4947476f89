// n / d by the multiplier and shift of make_divisor() (shader_params.h's DivisorGpu), in
// 32-bit arithmetic: (hi + n) >> shift, with hi = mulhi(n, multiplier), would overflow, so
// it is taken as (hi + ((n - hi) >> 1)) >> (shift - 1), the same value (n >= hi). d = 1
// has shift 0.
uint divide(uint n, DivisorGpu d) {
    if (d.shift == 0u) return n;
    uint hi, lo;
    umulExtended(n, d.multiplier, hi, lo);
    return (hi + ((n - hi) >> 1)) >> (d.shift - 1u);
}
