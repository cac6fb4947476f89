#pragma once
// sRGB8 encoding of a 2x2 box average in one table read (C++ and CUDA; GLSL reads the same
// words from the buffer of engine/mips/box_filter.h srgb8_tables()). The sum n of four
// linear values (srgb8_tables.h, 4x the average, at most 2^26) encodes to
// #{k : n >= 4 THRESHOLD[k]}. The kernels sum 4 x each linear value, m = 4n (exact, at most
// 2^28), and m falls in a bucket: of 2^16 sums below 2^26 and of 2^19 above it, where the
// thresholds lie far apart, so that no bucket holds two:
//   bucket = min(m >> 16, (m >> 19) + 896)    (1409 buckets)
// Each bucket holds a carry word,
//   (below << 24) + 2^24 - (where its threshold lies in it; its width if none) - its first sum
// (mod 2^32, below = the thresholds under the bucket), and the byte is (carry + m) >> 24:
// the comparison with the bucket's one threshold is the carry into bit 24. An encode was
// two dependent table reads (the bucket's byte, then that byte's threshold), a compare
// and a select, with fewer waits on shared-memory reads than a search of the table.
#include <cstddef>
#include <cstdint>

#include "srgb8_tables.h"

namespace tvlm {

inline constexpr uint32_t kSrgb8Thresholds[255] = {TVLM_SRGB8_THRESHOLD_VALUES};
inline constexpr uint32_t kSrgb8Linear[256] = {TVLM_SRGB8_LINEAR_VALUES};
inline constexpr uint32_t kSrgb8CarryBuckets = TVLM_SRGB8_CARRY_BUCKETS, kSrgb8CarryFine = 1024,
                          kSrgb8CarryCoarse = TVLM_SRGB8_CARRY_COARSE;

constexpr uint32_t srgb8_carry_bucket(uint32_t m) {
    const uint32_t fine = m >> 16, coarse = (m >> 19) + kSrgb8CarryCoarse;
    return fine < coarse ? fine : coarse;
}

// What the packed kernels keep in shared memory (CUDA's Srgb8Words, box_mips_srgb8.comp),
// copied 16 bytes at a time.
struct alignas(16) Srgb8PackedTables {
    uint32_t linear4[256];                   // 4 x srgb8_tables.h's linear values
    uint32_t carry[TVLM_SRGB8_CARRY_WORDS];  // kSrgb8CarryBuckets words, then 0s to whole chunks
};
static_assert(sizeof(Srgb8PackedTables) == 16 * TVLM_SRGB8_SHARED_CHUNKS, "the chunks the packed kernels copy");
static_assert(offsetof(Srgb8PackedTables, carry) == 4 * 256, "the carry words follow the linear values");
static_assert(TVLM_SRGB8_CARRY_WORDS >= kSrgb8CarryBuckets && TVLM_SRGB8_CARRY_WORDS % 4 == 0,
              "the buckets, in whole chunks");

// The tables as the box kernels read them (srgb8_tables.h), built at compile time;
// srgb8_tables() is this block as the Vulkan shaders' buffer, whose general shader
// (box_mips.comp) reads the linear values and the thresholds.
struct alignas(16) Srgb8TableWords {
    Srgb8PackedTables packed;
    uint32_t threshold[256];  // srgb8_tables.h's 255, then 0
};
static_assert(offsetof(Srgb8TableWords, threshold) == 4 * TVLM_SRGB8_THRESHOLD_WORD, "where the thresholds begin");

constexpr Srgb8TableWords make_srgb8_table_words() {
    Srgb8TableWords out{};
    for (uint32_t i = 0; i < 256; ++i) out.packed.linear4[i] = 4 * kSrgb8Linear[i];
    uint32_t below = 0;
    for (uint32_t i = 0; i < kSrgb8CarryBuckets; ++i) {
        const bool fine = i < kSrgb8CarryFine;
        const uint32_t start = fine ? i << 16 : (i - kSrgb8CarryCoarse) << 19, width = fine ? 1u << 16 : 1u << 19;
        while (below < 255 && 16 * kSrgb8Thresholds[below] <= start) ++below;
        uint32_t inside = width;  // none: m - start never reaches it
        if (below < 255 && 16 * kSrgb8Thresholds[below] - start < width) inside = 16 * kSrgb8Thresholds[below] - start;
        out.packed.carry[i] = (below << 24) + (1u << 24) - inside - start;  // mod 2^32
    }
    for (uint32_t k = 0; k < 255; ++k) out.threshold[k] = kSrgb8Thresholds[k];
    return out;
}

constexpr bool at_most_one_threshold_per_bucket() {
    for (uint32_t k = 1; k < 255; ++k)
        if (srgb8_carry_bucket(16 * kSrgb8Thresholds[k - 1]) == srgb8_carry_bucket(16 * kSrgb8Thresholds[k]))
            return false;
    return srgb8_carry_bucket(1u << 28) == kSrgb8CarryBuckets - 1 &&
           srgb8_carry_bucket((1u << 26) - 1) < kSrgb8CarryFine;
}
static_assert(at_most_one_threshold_per_bucket(), "an sRGB bucket holds at most one threshold");

}  // namespace tvlm
