#include "engine/textures/image.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "engine/textures/half.h"

namespace tvlm {

HostPixels host_pixels(const std::vector<uint8_t>& rgba8, uint32_t width, uint32_t height) {
    assert(rgba8.size() == size_t{width} * height * 4);
    return HostPixels{rgba8.data(), ComponentType::u8, width, height, 4, 0};
}

HostPixels host_pixels(const ImageF& image) {
    return HostPixels{image.texels.data(), ComponentType::f32, image.width, image.height, image.channels, 0};
}

namespace {

uint8_t quantize_unorm8(float v) {
    const double clamped = std::clamp(static_cast<double>(v), 0.0, 1.0);
    return static_cast<uint8_t>(std::floor(clamped * 255.0 + 0.5));
}

float read_component(const uint8_t* p, ComponentType type) {
    switch (type) {
        case ComponentType::u8: return static_cast<float>(*p) / 255.0f;
        case ComponentType::f16: {
            uint16_t h;
            std::memcpy(&h, p, 2);
            return half_to_float(h);
        }
        case ComponentType::f32: {
            float f;
            std::memcpy(&f, p, 4);
            return f;
        }
    }
    return 0.0f;
}

void write_component(uint8_t* p, ComponentType type, float v) {
    switch (type) {
        case ComponentType::u8: *p = quantize_unorm8(v); break;
        case ComponentType::f16: {
            const uint16_t h = float_to_half(v);
            std::memcpy(p, &h, 2);
            break;
        }
        case ComponentType::f32: std::memcpy(p, &v, 4); break;
    }
}

}  // namespace

std::vector<uint8_t> encode_texels(const ImageF& image, Format format) {
    const FormatInfo& info = format_info(format);
    assert(image.channels == info.channels);
    const size_t cb = component_bytes(info.component);
    std::vector<uint8_t> bytes(image.texels.size() * cb);
    for (size_t i = 0; i < image.texels.size(); ++i)
        write_component(bytes.data() + i * cb, info.component, image.texels[i]);
    return bytes;
}

ImageF decode_texels(std::span<const uint8_t> bytes, uint32_t width, uint32_t height, Format format) {
    const FormatInfo& info = format_info(format);
    ImageF image(width, height, info.channels);
    const size_t cb = component_bytes(info.component);
    assert(bytes.size() == image.texels.size() * cb);
    for (size_t i = 0; i < image.texels.size(); ++i)
        image.texels[i] = read_component(bytes.data() + i * cb, info.component);
    return image;
}

ImageF quantize(const ImageF& image, Format format) {
    const std::vector<uint8_t> bytes = encode_texels(image, format);
    return decode_texels(bytes, image.width, image.height, format);
}

void quantize_in_place(ImageF& image, Format format) {
    ImageF row(image.width, 1, image.channels);
    const size_t values = size_t{image.width} * image.channels;
    for (uint32_t y = 0; y < image.height; ++y) {
        float* texels = image.texels.data() + y * values;
        std::copy(texels, texels + values, row.texels.begin());
        const ImageF stored = decode_texels(encode_texels(row, format), image.width, 1, format);
        std::copy(stored.texels.begin(), stored.texels.end(), texels);
    }
}

ImageF to_image(const HostPixels& pixels, uint32_t channels) {
    ImageF image(pixels.width, pixels.height, channels);
    const size_t cb = component_bytes(pixels.type);
    const auto* base = static_cast<const uint8_t*>(pixels.data);
    for (uint32_t y = 0; y < pixels.height; ++y) {
        const uint8_t* row = base + size_t{y} * pixels.stride();
        for (uint32_t x = 0; x < pixels.width; ++x) {
            float in[4] = {0.0f, 0.0f, 0.0f, 1.0f};
            for (uint32_t c = 0; c < pixels.channels; ++c)
                in[c] = read_component(row + (size_t{x} * pixels.channels + c) * cb, pixels.type);
            if (pixels.channels == 1) in[1] = in[2] = in[0];
            for (uint32_t c = 0; c < channels; ++c) image.at(x, y, c) = in[c];
        }
    }
    return image;
}

void convert_host_pixels(const HostPixels& pixels, Format format, std::span<uint8_t> out) {
    const FormatInfo& info = format_info(format);
    assert(out.size() == size_t{pixels.width} * pixels.height * info.texel_bytes());
    if (pixels.type == info.component && pixels.channels == info.channels) {
        // Same layout: copy rows, dropping any row padding.
        const size_t row = pixels.packed_row_bytes();
        for (uint32_t y = 0; y < pixels.height; ++y)
            std::memcpy(out.data() + row * y, static_cast<const uint8_t*>(pixels.data) + pixels.stride() * y, row);
        return;
    }
    const std::vector<uint8_t> bytes = encode_texels(to_image(pixels, info.channels), format);
    std::memcpy(out.data(), bytes.data(), bytes.size());
}

std::vector<uint8_t> convert_host_pixels(const HostPixels& pixels, Format format) {
    std::vector<uint8_t> bytes(size_t{pixels.width} * pixels.height * format_info(format).texel_bytes());
    convert_host_pixels(pixels, format, bytes);
    return bytes;
}

}  // namespace tvlm
