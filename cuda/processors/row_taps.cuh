#pragma once
// One source row filtered across into one window column, three channels: the row pass's
// inner loop, shared by the two-pass kernels (two_pass_resize.cu) and the tiled ones
// (tiled_resize.cu). Terms are torch's, added in torch's order (taps ascending), so every
// caller's sums are the same floats.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/processors/packed_bytes.cuh"
#include "cuda/tensors/tensor_texels.h"

namespace tvlm::row_taps {

template <class In>
__device__ inline float input_value(In v) {
    return static_cast<float>(v);
}
// A byte without the conversion instruction (a quarter of the FMA rate; the taps convert
// each byte several times): 0x4B0000XX is 2^23 + XX as a float, exactly.
template <>
__device__ inline float input_value<uint8_t>(uint8_t v) {
    return __int_as_float(0x4B000000 | int(v)) - 8388608.0f;
}
template <>
__device__ inline float input_value<__half>(__half v) {
    return __half2float(v);
}
template <>
__device__ inline float input_value<__nv_bfloat16>(__nv_bfloat16 v) {
    return __bfloat162float(v);
}

// Element by element: `tap` is the row's first tap of channel 0, `step` the stride between
// taps, `channel` the offsets of the three channels, `wx` the column's weights.
template <class In>
__device__ inline void across_elements(const In* tap, int64_t step, const int64_t (&channel)[3], const float* wx,
                                       int count, float (&across)[3]) {
    across[0] = across[1] = across[2] = 0.0f;
#pragma unroll 4
    for (int j = 0; j < count; ++j, tap += step) {
        const float w = wx[j];
        for (int c = 0; c < 3; ++c) across[c] += input_value(tap[channel[c]]) * w;
    }
}

// 8-bit rows read as words (packed_bytes::reads_words, offsets under 2^31): the column's
// weights `w` sit in registers, G groups of four (zeros past its count), and each channel's
// taps are read as G + 1 words lined up with the weights by a funnel shift of the row's
// head bytes, a word load per four taps. The zero weights past a column's taps add +0 after
// its last term, which leaves the sum unchanged. `row` is the offset of channel 0's first
// tap, `end` one past the image's last byte: one bounds check covers the three channels, so
// their loads are in flight together and their sums interleave; the image's last bytes are
// read tap by tap from `wx`, so nothing past it is read.
template <int G>
__device__ __forceinline__ void across_words(const unsigned char* data, uint32_t row, uint32_t stride_c, uint32_t end,
                                             const float (&w)[4 * G], const float* wx, int count, float (&across)[3]) {
    using packed_bytes::byte_value;
    const uint32_t at[3] = {row, row + stride_c, row + 2 * stride_c};
    bool inside = true;
#pragma unroll
    for (int c = 0; c < 3; ++c) inside &= (at[c] & ~3u) + 4 * (G + 1) <= end;
    across[0] = across[1] = across[2] = 0.0f;
    if (!inside) {
        for (int c = 0; c < 3; ++c)
            for (int j = 0; j < count; ++j) across[c] = __fmaf_rn(input_value(data[at[c] + j]), wx[j], across[c]);
        return;
    }
    uint32_t word[3][G + 1];
#pragma unroll
    for (int c = 0; c < 3; ++c)
#pragma unroll
        for (int g = 0; g <= G; ++g) word[c][g] = __ldg(reinterpret_cast<const uint32_t*>(data + (at[c] & ~3u)) + g);
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        const uint32_t shift = 8 * (at[c] & 3);
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const uint32_t v = __funnelshift_r(word[c][g], word[c][g + 1], shift);
            across[c] = __fmaf_rn(byte_value<0>(v), w[4 * g], across[c]);
            across[c] = __fmaf_rn(byte_value<1>(v), w[4 * g + 1], across[c]);
            across[c] = __fmaf_rn(byte_value<2>(v), w[4 * g + 2], across[c]);
            across[c] = __fmaf_rn(byte_value<3>(v), w[4 * g + 3], across[c]);
        }
    }
}

// One row's T taps of three channels from the words they lie in (across_words with exactly T
// taps: T taps after a shift of up to 3 bytes span (T + 6) / 4 words). No bounds test: the
// caller has tested its rows' last words (across_taps_fit). Same terms and order as
// across_words, `w` zero past the column's count.
template <int T>
__device__ __forceinline__ void across_taps(const unsigned char* data, uint32_t row, uint32_t stride_c,
                                            const float (&w)[T], float (&across)[3]) {
    using packed_bytes::byte_value;
    constexpr int kWords = (T + 6) / 4;
    uint32_t word[3][kWords + 1];
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        const uint32_t at = row + c * stride_c;
#pragma unroll
        for (int g = 0; g < kWords; ++g) word[c][g] = __ldg(reinterpret_cast<const uint32_t*>(data + (at & ~3u)) + g);
        word[c][kWords] = 0;
    }
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        const uint32_t shift = 8 * ((row + c * stride_c) & 3);
        across[c] = 0.0f;
#pragma unroll
        for (int g = 0; g < (T + 3) / 4; ++g) {
            const uint32_t v = __funnelshift_r(word[c][g], word[c][g + 1], shift);
            if (4 * g + 0 < T) across[c] = __fmaf_rn(byte_value<0>(v), w[4 * g + 0], across[c]);
            if (4 * g + 1 < T) across[c] = __fmaf_rn(byte_value<1>(v), w[4 * g + 1], across[c]);
            if (4 * g + 2 < T) across[c] = __fmaf_rn(byte_value<2>(v), w[4 * g + 2], across[c]);
            if (4 * g + 3 < T) across[c] = __fmaf_rn(byte_value<3>(v), w[4 * g + 3], across[c]);
        }
    }
}

// Whether across_taps<T> may read the rows from `row` (channel 0's first tap) to `last_row`
// (the same column, the thread's last row): strides are not negative where words are read,
// so the last row's third channel reads the highest word.
template <int T>
__device__ __forceinline__ bool across_taps_fit(uint32_t last_row, uint32_t stride_c, uint32_t end) {
    return ((last_row + 2 * stride_c) & ~3u) + 4 * ((T + 6) / 4) <= end;
}

// A column's T weights, zeros past its count (its span fits T taps).
template <int T>
__device__ __forceinline__ void tap_weights(const float* wx, int count, float (&w)[T]) {
#pragma unroll
    for (int j = 0; j < T; ++j) w[j] = j < count ? wx[j] : 0.0f;
}

// One row of the column's span, three channels, byte by byte from the table's weights: the
// words' terms in their order, for rows and spans the word reads do not take.
__device__ __forceinline__ void across_bytes(const unsigned char* data, uint32_t row, uint32_t stride_c,
                                             const float* wx, int count, float (&across)[3]) {
    for (int c = 0; c < 3; ++c) {
        across[c] = 0.0f;
        for (int j = 0; j < count; ++j)
            across[c] = __fmaf_rn(input_value(data[row + c * stride_c + j]), wx[j], across[c]);
    }
}

// A column's word weights: its first 4G weights, zeros past its count.
template <int G>
__device__ __forceinline__ void word_weights(const float* wx, int count, float (&w)[4 * G]) {
#pragma unroll
    for (int j = 0; j < 4 * G; ++j) w[j] = j < count ? wx[j] : 0.0f;
}

// Whether across_words' 32-bit offsets reach every byte of each image.
inline bool word_offsets_fit(const TensorView& source, uint32_t source_width, uint32_t source_height) {
    if (source.stride_y < 0 || source.stride_c < 0) return false;
    const uint64_t end = 2 * uint64_t(source.stride_c) + uint64_t(source_height - 1) * uint64_t(source.stride_y) +
                         source_width;
    return end + 64 < (uint64_t{1} << 31);
}

// One past the last byte of an image read as words (stride_x 1): a row's words must not reach past it.
inline __host__ __device__ uint32_t words_end(uint32_t stride_c, uint32_t stride_y, uint32_t width, uint32_t height) {
    return 2 * stride_c + (height - 1) * stride_y + width;
}

}  // namespace tvlm::row_taps
