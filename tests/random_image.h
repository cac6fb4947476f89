#pragma once
// Seeded random test images: values a format can hold, so level 0 round-trips exactly.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <random>
#include <vector>

#include "engine/textures/half.h"
#include "engine/textures/image.h"

namespace tvlm::test {

inline ImageF random_image(uint32_t w, uint32_t h, Format format, uint32_t seed) {
    const FormatInfo& info = format_info(format);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    ImageF image(w, h, info.channels);
    for (float& v : image.texels) v = unit(rng);
    return quantize(image, format);
}

// Random 8-bit texels that vary little within each 8x8 block: a random base byte per block
// and channel (0..252) plus 0..3. Averages of 2x2 texels then fall all over [0, 255], the
// darkest and brightest included, where uniform random bytes almost never average near 0
// or 255: an sRGB encode reads its first and last buckets (srgb8_buckets.h) too.
inline ImageF narrow_window_image(uint32_t w, uint32_t h, Format format, uint32_t seed) {
    const FormatInfo& info = format_info(format);
    std::mt19937 rng(seed);
    const uint32_t blocks_x = (w + 7) / 8, blocks_y = (h + 7) / 8;
    std::vector<uint32_t> base(size_t{blocks_x} * blocks_y * info.channels);
    for (uint32_t& b : base) b = static_cast<uint32_t>(rng() % 253);
    ImageF image(w, h, info.channels);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x)
            for (uint32_t c = 0; c < info.channels; ++c)
                image.at(x, y, c) = float(base[((y / 8) * blocks_x + x / 8) * info.channels + c] +
                                          static_cast<uint32_t>(rng() % 4)) /
                                    255.0f;
    return quantize(image, format);
}

// Random rows, each constant along x: sampling along the horizontal cannot change a value,
// so implementation-defined anisotropic tap placement along rows does not matter.
inline ImageF rows_constant_image(uint32_t w, uint32_t h, Format format, uint32_t seed) {
    const ImageF column = random_image(1, h, format, seed);
    ImageF image(w, h, column.channels);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x)
            for (uint32_t c = 0; c < column.channels; ++c) image.at(x, y, c) = column.at(0, y, c);
    return image;
}

// An RGBA16F image of special binary16 values at random: subnormals, the largest finite
// values, negatives, both infinities, NaNs. The first 16 texels of row 0 hold 1 + c ulps
// in channel c (averages with row 1 that fall on ties), and rows 2-3 begin with 2x2 blocks
// whose float sums lose the small value to cancellation (32768 + (1 + 2^-9) - 32768:
// summed in float, the average rounds to 0.25 where the exact one is 0.25 + 2^-11), so a
// box filter that sums in float where that is not exact fails.
inline ImageF special_half_image(uint32_t w, uint32_t h, uint32_t seed) {
    const uint16_t kSpecial[] = {0x0000, 0x0001, 0x0003, 0x03ff, 0x0400, 0x0401, 0x3555, 0x3c00, 0x3c01, 0x7bff,
                                 0x7bfe, 0xfbff, 0x8001, 0xbc00, 0x7c00, 0x6400, 0x1400, 0x0002, 0xfc00, 0x7e00};
    ImageF image(w, h, 4);
    std::mt19937 random(seed);
    for (float& v : image.texels) v = half_to_float(kSpecial[random() % std::size(kSpecial)]);
    for (uint32_t x = 0; x < std::min(w, 16u); ++x)
        for (uint32_t c = 0; c < 4; ++c) image.at(x, 0, c) = half_to_float(static_cast<uint16_t>(0x3c00 + c));
    const uint16_t kCancelling[4] = {0x7800, 0x3c02, 0xf800, 0x0000};  // 32768, 1 + 2^-9, -32768, 0
    for (uint32_t block = 0; block < std::min(w, 32u) / 2 && h >= 4; ++block)
        for (uint32_t k = 0; k < 4; ++k)
            for (uint32_t c = 0; c < 4; ++c) {
                const auto bits = static_cast<uint16_t>(kCancelling[(k + block + c) % 4] ^
                                                        (block % 2 ? 0x8000u : 0u));  // rotated, negated
                image.at(2 * block + k % 2, 2 + k / 2, c) = half_to_float(bits);
            }
    // Signed zeros: a sum of zeros is -0 only where all four are -0 (rows 6-7, two texels
    // a block): all -0; -0 and +0; -0 with a cancelling pair.
    const uint16_t kZeros[3][4] = {
        {0x8000, 0x8000, 0x8000, 0x8000}, {0x8000, 0x8000, 0x8000, 0x0000}, {0x8000, 0x0001, 0x8001, 0x8000}};
    for (uint32_t block = 0; block < std::min(w, 32u) / 2 && h >= 8; ++block)
        for (uint32_t k = 0; k < 4; ++k)
            for (uint32_t c = 0; c < 4; ++c)
                image.at(2 * block + k % 2, 6 + k / 2, c) = half_to_float(kZeros[(block + c) % 3][k]);
    return image;
}

}  // namespace tvlm::test
