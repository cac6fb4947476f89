#include "engine/processors/byte_filter_avx2.h"

#include <cstring>

#include "engine/error.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TVLM_AVX2 1
#endif

namespace tvlm::avx2 {

#ifdef TVLM_AVX2

bool available() { return __builtin_cpu_supports("avx2"); }

namespace {

// The shuffle that turns 16 bytes from pixel q onwards into int16 pairs (R_q, R_q+1), (G_q,
// G_q+1), (B_q, B_q+1), 0: `pixel` is q's place in the load (0 or 2), in both 128-bit lanes.
__attribute__((target("avx2"))) __m256i pair_shuffle(int step, int pixel) {
    alignas(32) int8_t mask[32];
    for (int lane = 0; lane < 2; ++lane) {
        int8_t* m = mask + 16 * lane;
        std::memset(m, -128, 16);  // a set high bit: a zero byte
        for (int c = 0; c < 3; ++c) {
            m[4 * c] = static_cast<int8_t>(pixel * step + c);
            m[4 * c + 2] = static_cast<int8_t>((pixel + 1) * step + c);
        }
    }
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(mask));
}

}  // namespace

__attribute__((target("avx2"))) void across_rgb(const uint8_t* row0, const uint8_t* row1, int step,
                                                const PairedTaps& taps, int64_t left, int64_t width, uint8_t* out0,
                                                uint8_t* out1) {
    const bool two = row1 != nullptr;
    if (!two) row1 = row0;
    const __m256i first_pair = pair_shuffle(step, 0), second_pair = pair_shuffle(step, 2);
    const __m256i half = _mm256_set1_epi32(1 << (taps.precision - 1));
    const __m128i shift = _mm_cvtsi32_si128(taps.precision);
    for (int64_t x = 0; x < width; ++x) {
        const int64_t o = left + x;
        const int64_t offset = taps.first[o] * step;
        const uint8_t* p0 = row0 + offset;
        const uint8_t* p1 = row1 + offset;
        const int32_t* w = taps.pairs + o * taps.pairs_per_output;
        __m256i sum = half;
        // Four taps a step: one 16-byte load a row (both rows in one register), two pairs.
        for (int64_t t = 0; t < taps.count[o]; t += 4, p0 += 4 * step, p1 += 4 * step, w += 2) {
            const __m256i pixels = _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p0))),
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(p1)), 1);
            sum = _mm256_add_epi32(sum,
                                   _mm256_madd_epi16(_mm256_shuffle_epi8(pixels, first_pair), _mm256_set1_epi32(w[0])));
            sum = _mm256_add_epi32(
                sum, _mm256_madd_epi16(_mm256_shuffle_epi8(pixels, second_pair), _mm256_set1_epi32(w[1])));
        }
        // (R, G, B, 0) per row, shifted, clamped to bytes by the saturating packs.
        const __m256i shifted = _mm256_sra_epi32(sum, shift);
        const __m256i words = _mm256_packs_epi32(shifted, shifted);
        const __m256i bytes = _mm256_packus_epi16(words, words);
        // 4 bytes a store (the next pixel's first byte rewritten by its own), 3 for a row's last.
        const size_t stored = x + 1 < width ? 4 : 3;
        const int32_t rgb0 = _mm_cvtsi128_si32(_mm256_castsi256_si128(bytes));
        std::memcpy(out0 + 3 * x, &rgb0, stored);
        if (two) {
            const int32_t rgb1 = _mm_cvtsi128_si32(_mm256_extracti128_si256(bytes, 1));
            std::memcpy(out1 + 3 * x, &rgb1, stored);
        }
    }
}

__attribute__((target("avx2"))) void interleave_rgb(const uint8_t* r, const uint8_t* g, const uint8_t* b, int64_t width,
                                                    uint8_t* out) {
    const __m128i zero = _mm_setzero_si128();
    int64_t x = 0;
    for (; x + 16 <= width; x += 16, out += 64) {
        const __m128i red = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r + x));
        const __m128i green = _mm_loadu_si128(reinterpret_cast<const __m128i*>(g + x));
        const __m128i blue = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + x));
        const __m128i rg_low = _mm_unpacklo_epi8(red, green), rg_high = _mm_unpackhi_epi8(red, green);
        const __m128i b0_low = _mm_unpacklo_epi8(blue, zero), b0_high = _mm_unpackhi_epi8(blue, zero);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi16(rg_low, b0_low));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16), _mm_unpackhi_epi16(rg_low, b0_low));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 32), _mm_unpacklo_epi16(rg_high, b0_high));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 48), _mm_unpackhi_epi16(rg_high, b0_high));
    }
    for (; x < width; ++x, out += 4) {
        out[0] = r[x];
        out[1] = g[x];
        out[2] = b[x];
        out[3] = 0;
    }
}

__attribute__((target("avx2"))) size_t down(const uint8_t* rows, size_t pitch, const int16_t* weights, int64_t count,
                                            int precision, size_t n, uint8_t* out) {
    const __m256i half = _mm256_set1_epi32(1 << (precision - 1));
    const __m256i zero = _mm256_setzero_si256();
    const __m128i shift = _mm_cvtsi32_si128(precision);
    size_t i = 0;
    // 32 outputs a step: two rows' bytes interleaved into int16 pairs, one multiply-add a pair
    // of taps. The unpacks work within 128-bit lanes, and the packs undo their order.
    for (; i + 32 <= n; i += 32) {
        __m256i sums[4] = {half, half, half, half};
        for (int64_t j = 0; j < count; j += 2) {
            const uint8_t* a = rows + size_t(j) * pitch + i;
            const bool pair = j + 1 < count;
            const __m256i row_a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
            const __m256i row_b = pair ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + pitch)) : zero;
            const uint32_t w = uint32_t(uint16_t(weights[j])) | (pair ? uint32_t(uint16_t(weights[j + 1])) << 16 : 0u);
            const __m256i wv = _mm256_set1_epi32(int32_t(w));
            const __m256i low = _mm256_unpacklo_epi8(row_a, row_b), high = _mm256_unpackhi_epi8(row_a, row_b);
            sums[0] = _mm256_add_epi32(sums[0], _mm256_madd_epi16(_mm256_unpacklo_epi8(low, zero), wv));
            sums[1] = _mm256_add_epi32(sums[1], _mm256_madd_epi16(_mm256_unpackhi_epi8(low, zero), wv));
            sums[2] = _mm256_add_epi32(sums[2], _mm256_madd_epi16(_mm256_unpacklo_epi8(high, zero), wv));
            sums[3] = _mm256_add_epi32(sums[3], _mm256_madd_epi16(_mm256_unpackhi_epi8(high, zero), wv));
        }
        for (__m256i& s : sums) s = _mm256_sra_epi32(s, shift);
        const __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(sums[0], sums[1]),
                                                  _mm256_packs_epi32(sums[2], sums[3]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), bytes);
    }
    return i;
}

#else

bool available() { return false; }

void across_rgb(const uint8_t*, const uint8_t*, int, const PairedTaps&, int64_t, int64_t, uint8_t*, uint8_t*) {
    throw Error("the AVX2 byte resize was called on a build without it");
}

void interleave_rgb(const uint8_t*, const uint8_t*, const uint8_t*, int64_t, uint8_t*) {
    throw Error("the AVX2 byte resize was called on a build without it");
}

size_t down(const uint8_t*, size_t, const int16_t*, int64_t, int, size_t, uint8_t*) {
    throw Error("the AVX2 byte resize was called on a build without it");
}

#endif

}  // namespace tvlm::avx2
