#include <doctest/doctest.h>

#include <bit>
#include <cmath>

#include "engine/error.h"
#include "engine/textures/format.h"
#include "engine/textures/half.h"
#include "engine/textures/image.h"

using namespace tvlm;

TEST_CASE("half conversion: known values and round to nearest even") {
    CHECK(float_to_half(1.0f) == 0x3c00);
    CHECK(float_to_half(-2.0f) == 0xc000);
    CHECK(float_to_half(65504.0f) == 0x7bff);
    CHECK(float_to_half(65520.0f) == 0x7c00);                          // rounds past the largest half
    CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);             // smallest subnormal
    CHECK(float_to_half(std::ldexp(1.0f, -26)) == 0x0000);             // below half of it
    CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);      // tie -> even (down)
    CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // tie -> even (up)
    CHECK(std::isnan(half_to_float(float_to_half(NAN))));
    CHECK(half_to_float(0x3555) == doctest::Approx(0.333251953125));
}

TEST_CASE("half conversion: every finite half round-trips exactly") {
    for (uint32_t bits = 0; bits < 0x10000; ++bits) {
        const auto h = static_cast<uint16_t>(bits);
        if ((h & 0x7c00) == 0x7c00) continue;  // inf and nan
        REQUIRE(float_to_half(half_to_float(h)) == h);
    }
}

TEST_CASE("formats: names parse, unknown names list the valid ones") {
    for (Format f : kAllFormats) CHECK(parse_format(format_info(f).name) == f);
    CHECK_THROWS_WITH_AS(parse_format("rgb8"), doctest::Contains("rgba8, rgba8_srgb"), Error);
    CHECK(format_info(Format::rgba16f).texel_bytes() == 8);
    CHECK(format_info(Format::r32f).texel_bytes() == 4);
}

TEST_CASE("encoding: u8 rounds half up, clamps; host pixels convert between types") {
    ImageF image(4, 1, 1);
    image.texels = {0.5f / 255.0f, 1.49f / 255.0f, -0.2f, 1.7f};
    const auto bytes = encode_texels(ImageF(image), Format::r32f);
    CHECK(bytes.size() == 16);
    ImageF rgba(1, 1, 4);
    rgba.texels = {0.5f / 255.0f, 1.49f / 255.0f, -0.2f, 1.7f};
    const auto u8 = encode_texels(rgba, Format::rgba8_unorm);
    CHECK(u8 == std::vector<uint8_t>{1, 1, 0, 255});

    // 3-channel u8 -> rgba16f adds alpha 1 and converts exactly representable values.
    const uint8_t rgb[6] = {0, 255, 51, 102, 204, 255};
    const HostPixels pixels{rgb, ComponentType::u8, 2, 1, 3, 0};
    const ImageF converted = decode_texels(convert_host_pixels(pixels, Format::rgba16f), 2, 1, Format::rgba16f);
    CHECK(converted.at(0, 0, 1) == 1.0f);
    CHECK(converted.at(0, 0, 3) == 1.0f);
    CHECK(converted.at(1, 0, 1) == doctest::Approx(0.8).epsilon(1e-3));
    // Padded rows are honoured.
    const uint8_t padded[] = {10, 20, 30, 40, 99, 99, 50, 60, 70, 80, 99, 99};
    const HostPixels rows{padded, ComponentType::u8, 1, 2, 4, 6};
    CHECK(convert_host_pixels(rows, Format::rgba8_unorm) == std::vector<uint8_t>{10, 20, 30, 40, 50, 60, 70, 80});
}
