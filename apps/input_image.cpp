#include "input_image.h"

#include "image_files.h"
#include "test_chart.h"

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

InputImage load_input(const std::string& path, Format format) {
    if (!floats(format)) return from_bytes(load_image(path), format);
    ImageF image = load_image_float(path);
    return {image.width, image.height, {}, std::move(image)};
}

InputImage chart_input(Format format) { return from_bytes(make_test_chart(), format); }

}  // namespace tvlm
