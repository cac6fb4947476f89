#pragma once
// An 8-bit RGBA image in host memory: what image files decode to and the test chart is.
#include <cstdint>
#include <vector>

namespace tvlm {

struct Rgba8Image {
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> texels;  // width * height * 4, rows top to bottom
};

}  // namespace tvlm
