#pragma once
// An image given to the command line, kept in the precision its texture format stores:
// RGBA8 bytes for 8-bit formats, float RGBA for float formats (so a 16-bit PNG fills an
// rgba16f or rgba32f texture with all its bits).
#include <cstdint>
#include <string>
#include <vector>

#include "format.h"
#include "image.h"

namespace tvlm {

struct InputImage {
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> rgba8;  // 8-bit formats
    ImageF rgba_float;           // float formats (4 channels)

    // What upload() takes, whichever is held.
    HostPixels pixels() const;
};

// A PNG/JPEG file (image_files.h: limits, errors) for `format`.
InputImage load_input(const std::string& path, Format format);
// The embedded test chart for `format`.
InputImage chart_input(Format format);

}  // namespace tvlm
