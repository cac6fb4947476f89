#include "apps/input_image.h"

#include <cstdint>

#include "engine/image_files/image_files.h"
#include "engine/textures/test_chart.h"

namespace tvlm {

namespace {

bool floats(Format format) { return format_info(format).component != ComponentType::u8; }

InputImage from_bytes(Rgba8Image image, Format format) {
    InputImage input{image.width, image.height, {}, {}};
    if (floats(format)) input.rgba_float = to_image(host_pixels(image.texels, image.width, image.height), 4);
    else input.rgba8 = std::move(image.texels);
    return input;
}

}  // namespace

HostPixels InputImage::pixels() const {
    return rgba8.empty() ? host_pixels(rgba_float) : host_pixels(rgba8, width, height);
}

uint64_t host_bytes_per_pixel(Format format, InputUse use) {
    const uint64_t decoded = floats(format) ? sizeof(float) * 4 : 4;
    // The CPU reference's chain: float RGBA, 4/3 of level 0, with room for the sampled values. A texture: its
    // staging copy, and the texture and a readback where device memory is host memory.
    if (use == InputUse::cpu_reference) return decoded + 24;
    return decoded + 3 * format_info(format).texel_bytes();
}

InputImage load_input(const std::string& path, Format format, InputUse use) {
    ImageLimits limits;
    limits.host_bytes_per_pixel = host_bytes_per_pixel(format, use);
    if (!floats(format)) return from_bytes(load_image(path, limits), format);
    ImageF image = load_image_float(path, limits);
    return {image.width, image.height, {}, std::move(image)};
}

InputImage chart_input(Format format) { return from_bytes(make_test_chart(), format); }

}  // namespace tvlm
