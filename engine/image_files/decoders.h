#pragma once
// The two decoders behind decode_image (image_files.h), each over a whole file in memory.
// Both throw Error with the library's own message; limits are checked from the header,
// before the pixels are allocated; rows are stored as they are decoded (JPEG's into a buffer
// reserved for the whole image but not touched beyond them), so a file whose data ends early
// costs resident memory for the rows it really has.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/image_files/image_files.h"

namespace tvlm {

bool is_png(const uint8_t* bytes, size_t size);
bool is_jpeg(const uint8_t* bytes, size_t size);

// RGBA rows of 8-bit samples (RGB where a JPEG was asked for 3 channels), or of 16-bit
// samples in native byte order (`bits` 16: PNGs of 16 bits per sample whose caller keeps them).
struct DecodedPixels {
    uint32_t width = 0, height = 0, bits = 8, channels = 4;
    std::vector<uint8_t> bytes;
};

DecodedPixels decode_png(const uint8_t* bytes, size_t size, const std::string& name, const ImageLimits& limits,
                         bool keep_16_bits);
DecodedPixels decode_jpeg(const uint8_t* bytes, size_t size, const std::string& name, const ImageLimits& limits,
                          uint32_t channels = 4);

// Throws the size message when width x height is over the limits (or zero).
void check_image_size(uint32_t width, uint32_t height, const std::string& name, const ImageLimits& limits);

}  // namespace tvlm
