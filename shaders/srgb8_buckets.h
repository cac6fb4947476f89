#pragma once
// sRGB8 encoding of a 2x2 box average in two table reads (C++ and CUDA; GLSL reads the same
// table from the buffer of engine/mips/box_filter.h srgb8_tables()). The sum n of four linear
// values (srgb8_tables.h, 4x the average, below 2^26) encodes to #{k : n >= 4 THRESHOLD[k]};
// bucket i = sums [i << 14, (i + 1) << 14) holds the count of thresholds below it, and since
// no bucket holds two thresholds, one comparison with the next threshold settles the byte:
//   byte = below[n >> 14]; if (byte < 255 && n >= 4 * THRESHOLD[byte]) ++byte;
// The GPU kernels hold 4 x THRESHOLD and a 256th entry no sum reaches, so that is
// byte += n >= threshold4[byte]: 12% fewer instructions in CUDA's packed sRGB8 kernel.
#include <cstddef>
#include <cstdint>

#include "srgb8_tables.h"

namespace tvlm {

inline constexpr uint32_t kSrgb8BucketShift = 14, kSrgb8Buckets = 4097;

struct Srgb8Buckets {
    uint8_t below[kSrgb8Buckets];
};

inline constexpr uint32_t kSrgb8Thresholds[255] = {TVLM_SRGB8_THRESHOLD_VALUES};

constexpr Srgb8Buckets make_srgb8_buckets() {
    Srgb8Buckets out{};
    uint32_t k = 0;
    for (uint32_t i = 0; i < kSrgb8Buckets; ++i) {
        while (k < 255 && 4 * kSrgb8Thresholds[k] <= (i << kSrgb8BucketShift)) ++k;
        out.below[i] = static_cast<uint8_t>(k);
    }
    return out;
}

// The same bytes four to a word (byte i in bits 8 (i % 4) of word i / 4): what the Vulkan
// shaders read from the tables' buffer, and what CUDA copies into shared memory a word,
// not a byte, at a time.
struct Srgb8BucketWords {
    uint32_t words[(kSrgb8Buckets + 3) / 4];
};

constexpr Srgb8BucketWords make_srgb8_bucket_words() {
    const Srgb8Buckets buckets = make_srgb8_buckets();
    Srgb8BucketWords out{};
    for (uint32_t i = 0; i < kSrgb8Buckets; ++i) out.words[i / 4] |= uint32_t{buckets.below[i]} << (8 * (i % 4));
    return out;
}

// The three tables as the box kernels hold them in shared memory, built at compile time and
// copied 16 bytes at a time (CUDA's Srgb8Words, box_mips_srgb8.comp; srgb8_tables() is this
// block as the Vulkan shaders' buffer): 4 x each threshold is what an encode compares a sum
// of four with, and the 256th one no sum reaches settles byte 255.
struct alignas(16) Srgb8TableWords {
    uint32_t linear[256];
    uint32_t threshold4[256];
    Srgb8BucketWords below;  // 4097 bytes in 1025 words
    uint32_t padding[3];     // to whole 16-byte chunks
};
static_assert(sizeof(Srgb8TableWords) == 16 * TVLM_SRGB8_CHUNKS, "the chunks the shader copies");
static_assert(offsetof(Srgb8TableWords, below) == 4 * TVLM_SRGB8_TABLE_WORDS, "where the shader's bucket words begin");

constexpr Srgb8TableWords make_srgb8_table_words() {
    constexpr uint32_t linear[256] = {TVLM_SRGB8_LINEAR_VALUES};
    Srgb8TableWords out{};
    for (uint32_t i = 0; i < 256; ++i) out.linear[i] = linear[i];
    for (uint32_t k = 0; k < 255; ++k) out.threshold4[k] = 4 * kSrgb8Thresholds[k];
    out.threshold4[255] = 0xffffffffu;
    out.below = make_srgb8_bucket_words();
    return out;
}

constexpr bool at_most_one_threshold_per_bucket() {
    for (uint32_t k = 1; k < 255; ++k)
        if (4 * (kSrgb8Thresholds[k] - kSrgb8Thresholds[k - 1]) < (1u << kSrgb8BucketShift)) return false;
    return true;
}
static_assert(at_most_one_threshold_per_bucket(), "an sRGB bucket of 2^14 sums holds at most one threshold");

}  // namespace tvlm
