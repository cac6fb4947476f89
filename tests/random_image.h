#pragma once
// Seeded random test images: values a format can hold, so level 0 round-trips exactly.
#include <cstdint>
#include <random>

#include "image.h"

namespace tvlm::test {

inline ImageF random_image(uint32_t w, uint32_t h, Format format, uint32_t seed) {
    const FormatInfo& info = format_info(format);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    ImageF image(w, h, info.channels);
    for (float& v : image.texels) v = unit(rng);
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

}  // namespace tvlm::test
