#pragma once
// Image files: PNG/JPEG (anything stb_image reads) in as RGBA8, PNG out.
#include <cstdint>
#include <string>
#include <vector>

#include "image.h"

namespace tvlm {

struct Rgba8Image {
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> texels;  // width * height * 4
};

// Throws Error (naming the file and the reason) for missing, empty, truncated or
// non-image files and for images larger than max_dimension on a side.
Rgba8Image load_image(const std::string& path, uint32_t max_dimension = 16384);

// Writes 1-, 3- or 4-channel texels clamped to [0,1] as 8-bit PNG. The file appears
// whole or not at all (written to a temporary name, then renamed).
void save_png(const std::string& path, const ImageF& image);
void save_png(const std::string& path, const Rgba8Image& image);

}  // namespace tvlm
