#pragma once
// Image files in and out, for the command line and the tests: PNG and JPEG in, through
// libpng and libjpeg-turbo (well-kept, fuzzed decoders; nothing else is accepted), PNG out.
// Every limit is checked before anything the file's header asks for is allocated, and a
// file whose data ends early or is corrupt is an error, never zeros.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/textures/image.h"
#include "engine/textures/rgba8_image.h"

namespace tvlm {

// What a decoder may be asked to allocate.
struct ImageLimits {
    uint32_t max_side = 16384;               // either side, in pixels
    uint64_t max_pixels = 16384ull * 16384;  // width * height (1 GiB of RGBA8)
    // Host memory the caller's whole job takes per pixel of the image (the decoded RGBA8 at
    // least): an image whose job would not fit the memory this process may still take
    // (host_memory.h) is refused at its header, before anything is decoded.
    uint64_t host_bytes_per_pixel = 4;
    uint64_t memory_pixels = UINT64_MAX;  // set by the decoders from the above; not an input
};

// Decodes the PNG or JPEG in `bytes` (`name` for messages) to RGBA8: palettes, grey, 16-bit
// and alpha-less images converted (16-bit rounded to 8; decode_image_float keeps them). Throws Error, naming the file and
// the reason, for anything else: an unknown signature, a corrupt or truncated stream
// (libjpeg's "premature end of data" included), a CMYK JPEG, or a size over the limits.
Rgba8Image decode_image(const uint8_t* bytes, size_t size, const std::string& name, const ImageLimits& limits = {});

// The same as float RGBA in [0, 1] (4 channels), 16-bit PNGs at their full precision (v /
// 65535), 8-bit images as v / 255: what float texture formats are filled from.
ImageF decode_image_float(const uint8_t* bytes, size_t size, const std::string& name, const ImageLimits& limits = {});

// decode_image of a file; also throws for a missing, unreadable or empty file, a directory,
// or a file over 1 GiB.
Rgba8Image load_image(const std::string& path, const ImageLimits& limits = {});
inline Rgba8Image load_image(const std::string& path, uint32_t max_side) {
    return load_image(path, ImageLimits{max_side, uint64_t{max_side} * max_side});
}
ImageF load_image_float(const std::string& path, const ImageLimits& limits = {});

// Pixels for consumers that take RGB (the Python processors): a JPEG decoded straight to RGB;
// a PNG to RGB where every alpha is 255, else kept RGBA (`channels` 4) for the caller to
// composite as it must. Rows of width * channels bytes, top to bottom.
struct RgbPixels {
    uint32_t width = 0, height = 0, channels = 3;
    std::vector<uint8_t> bytes;
};
RgbPixels decode_image_rgb(const uint8_t* bytes, size_t size, const std::string& name, const ImageLimits& limits = {});
RgbPixels load_image_rgb(const std::string& path, const ImageLimits& limits = {});

// The format of a whole encoded image whose structure is complete, walked without decoding:
// a JPEG's marker segments and scans up to its end-of-image marker, a PNG's chunks up to
// IEND. For decoders that cannot be relied on to report a stream that ends early (GPU
// decoders); throws Error naming `name` for another format, a truncated or a broken stream.
enum class EncodedFormat { png, jpeg };
EncodedFormat check_encoded_image(const uint8_t* bytes, size_t size, const std::string& name);

// Row y of an image being written: `width * channels` bytes, rows asked for in order, so a
// caller can convert (or read back) one row at a time instead of the whole image.
using PngRows = std::function<const uint8_t*(uint32_t y)>;

// Writes a width x height PNG of 1, 3 or 4 channels to `path` as given (callers that need
// all-or-nothing files pass a temporary name and rename: apps/output_files.h). Fast zlib
// compression: these are inspection images, written often. Throws Error naming the path.
void write_png(const std::string& path, uint32_t width, uint32_t height, uint32_t channels, const PngRows& rows);

// Whole images: float texels clamped to [0, 1] and rounded to bytes, or RGBA8 as they are.
void write_png(const std::string& path, const ImageF& image);
void write_png(const std::string& path, const Rgba8Image& image);

}  // namespace tvlm
