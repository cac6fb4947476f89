#pragma once
// The two integer passes of torch's uint8 resize (torch_byte_resize.cpp) with AVX2, for the
// CPUs that have it. Each tap multiplies a byte by an int16 weight and sums in int32, as the
// scalar passes do: integer sums, so the order of the terms does not change the result and
// the bytes equal torch's. Pairs of taps go through one multiply-add (pmaddwd), as torch's
// own AVX2 kernels (taken from Pillow-SIMD) do.
#include <cstddef>
#include <cstdint>

namespace tvlm::avx2 {

// Whether this CPU runs the functions below (an x86-64 CPU with AVX2).
bool available();

// One axis's taps for the across pass: output i reads pixels first[i] .. first[i] + count[i]
// - 1 with the int16 weights paired in int32s, `pairs` per output (even; zero past count).
struct PairedTaps {
    const int64_t* first = nullptr;
    const int64_t* count = nullptr;
    const int32_t* pairs = nullptr;
    int64_t pairs_per_output = 0;
    int precision = 0;
};

// Across one row, or two with the same taps (row1 and out1 null for one): outputs [left,
// left + width) of RGB pixels `step` bytes apart (3 or 4; channels adjacent) into out, 3
// bytes a pixel. Reads up to 16 bytes from each group of four taps' first pixel, past the
// row's last pixel: the caller makes sure they are readable. Writes the 3 * width bytes of
// each out row and nothing else.
void across_rgb(const uint8_t* row0, const uint8_t* row1, int step, const PairedTaps& taps, int64_t left, int64_t width,
                uint8_t* out0, uint8_t* out1);

// Three planes' rows (r, g, b: width bytes each) as width 4-byte pixels (R, G, B, 0) in out:
// planar images' rows for across_rgb.
void interleave_rgb(const uint8_t* r, const uint8_t* g, const uint8_t* b, int64_t width, uint8_t* out);

// Down: out[i] = clamp((2^(precision - 1) + sum over j < count of weights[j] * rows[j * pitch
// + i]) >> precision, 0, 255) for i below n rounded down to 32 bytes. Returns how many it
// wrote; the caller's scalar pass writes the rest.
size_t down(const uint8_t* rows, size_t pitch, const int16_t* weights, int64_t count, int precision, size_t n,
            uint8_t* out);

}  // namespace tvlm::avx2
