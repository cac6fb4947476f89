#pragma once
// CPU images: float texels for the reference, and the host pixel views the engine uploads.
// A texel value is what the format stores, read back as float: UNORM bytes as byte/255,
// sRGB bytes as their encoded (not linearised) value, floats as they are.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/textures/format.h"

namespace tvlm {

struct ImageF {
    uint32_t width = 0, height = 0, channels = 0;
    std::vector<float> texels;  // row-major, channels interleaved

    ImageF() = default;
    ImageF(uint32_t w, uint32_t h, uint32_t c) : width(w), height(h), channels(c), texels(size_t{w} * h * c, 0.0f) {}
    float& at(uint32_t x, uint32_t y, uint32_t c) { return texels[(size_t{y} * width + x) * channels + c]; }
    float at(uint32_t x, uint32_t y, uint32_t c) const { return texels[(size_t{y} * width + x) * channels + c]; }
};

// Interleaved pixels in host memory, as given to upload(). row_bytes 0 means tightly packed.
struct HostPixels {
    const void* data = nullptr;
    ComponentType type = ComponentType::u8;
    uint32_t width = 0, height = 0, channels = 4;  // channels 1, 3 or 4
    size_t row_bytes = 0;

    size_t packed_row_bytes() const { return size_t{width} * channels * component_bytes(type); }
    size_t stride() const { return row_bytes ? row_bytes : packed_row_bytes(); }
};

HostPixels host_pixels(const std::vector<uint8_t>& rgba8, uint32_t width, uint32_t height);
HostPixels host_pixels(const ImageF& image);  // f32 view of an ImageF

// Quantises texels to what `format` stores: u8 rounds half up (floor(v*255+0.5)) after
// clamping to [0,1]; f16 rounds to nearest even; f32 is unchanged. Channel counts must match.
std::vector<uint8_t> encode_texels(const ImageF& image, Format format);
ImageF decode_texels(std::span<const uint8_t> bytes, uint32_t width, uint32_t height, Format format);
ImageF quantize(const ImageF& image, Format format);
// The same in place, a row at a time: no copy of the image.
void quantize_in_place(ImageF& image, Format format);

// Converts host pixels of any component type and 1/3/4 channels to the bytes of `format`
// (3 -> 4 channels adds alpha 1; 1 -> 4 replicates grey; 4/3 -> 1 keeps red).
std::vector<uint8_t> convert_host_pixels(const HostPixels& pixels, Format format);
// The same into `out` (exactly width * height * texel bytes), e.g. a mapped staging buffer.
void convert_host_pixels(const HostPixels& pixels, Format format, std::span<uint8_t> out);
ImageF to_image(const HostPixels& pixels, uint32_t channels);

}  // namespace tvlm
