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

}  // namespace tvlm::test
