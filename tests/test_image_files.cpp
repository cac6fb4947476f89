// Image files and the embedded test chart.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <cmath>
#include <set>

#include "engine/error.h"
#include "engine/image_files/image_files.h"
#include "engine/textures/image.h"
#include "engine/textures/test_chart.h"

using namespace tvlm;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
    const fs::path dir = fs::temp_directory_path() / ("tvlm_test_io_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir;
}

void write_file(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }


// The pattern tests/fuzz/make_seeds.py draws: channel c of pixel (x, y).
uint8_t seed_pattern(uint32_t x, uint32_t y, uint32_t w, uint32_t h, uint32_t c) {
    const uint32_t values[4] = {x * 255 / std::max(1u, w - 1), y * 255 / std::max(1u, h - 1), ((x + y) * 7) % 256,
                                (x * y) % 256};
    return static_cast<uint8_t>(values[c]);
}

Rgba8Image seed(const std::string& name) { return load_image(std::string(TVLM_FUZZ_DIR) + "/corpus/" + name); }

double mean_error_to_pattern(const Rgba8Image& image, uint32_t channels) {
    double sum = 0;
    for (uint32_t y = 0; y < image.height; ++y)
        for (uint32_t x = 0; x < image.width; ++x)
            for (uint32_t c = 0; c < 3; ++c) {
                const uint32_t from = channels == 1 ? 0 : c;
                sum += std::abs(double(image.texels[(size_t{y} * image.width + x) * 4 + c]) -
                                seed_pattern(x, y, image.width, image.height, from));
            }
    return sum / (double(image.width) * image.height * 3);
}

}  // namespace

TEST_CASE("PNG round trip keeps every byte") {
    const fs::path dir = temp_dir();
    const Rgba8Image chart = make_test_chart(64, 48);
    write_png((dir / "chart.png").string(), chart);
    const Rgba8Image back = load_image((dir / "chart.png").string());
    CHECK(back.width == 64);
    CHECK(back.height == 48);
    CHECK(back.texels == chart.texels);
    for (uint32_t channels : {1u, 3u}) {  // fewer channels arrive as RGBA: grey spread, alpha opaque
        ImageF image(5, 3, channels);
        for (size_t i = 0; i < image.texels.size(); ++i) image.texels[i] = float(i % 7) / 6.0f;
        write_png((dir / "few.png").string(), image);
        const Rgba8Image few = load_image((dir / "few.png").string());
        for (uint32_t p = 0; p < 15; ++p)
            for (uint32_t c = 0; c < 4; ++c) {
                const uint32_t from = channels == 1 ? 0 : c;
                const float want = c == 3 ? 1.0f : image.texels[p * channels + from];
                CHECK(few.texels[p * 4 + c] == uint8_t(std::floor(want * 255.0f + 0.5f)));
            }
    }
    fs::remove_all(dir);
}

TEST_CASE("every kind of PNG the decoder takes arrives as RGBA8 with its values") {
    const Rgba8Image rgba = seed("png/rgba.png"), rgb = seed("png/rgb.png"), grey16 = seed("png/grey16.png");
    REQUIRE(rgba.width == 37);
    REQUIRE(rgba.height == 23);
    for (uint32_t y = 0; y < 23; ++y)
        for (uint32_t x = 0; x < 37; ++x)
            for (uint32_t c = 0; c < 4; ++c) {
                const size_t i = (size_t{y} * 37 + x) * 4 + c;
                REQUIRE(rgba.texels[i] == seed_pattern(x, y, 37, 23, c));
                REQUIRE(rgb.texels[i] == (c == 3 ? 255 : seed_pattern(x, y, 37, 23, c)));
            }
    REQUIRE(grey16.width == 19);
    for (uint32_t y = 0; y < grey16.height; ++y)  // 16-bit v * 257 rounds back to v
        for (uint32_t x = 0; x < 19; ++x)
            for (uint32_t c = 0; c < 4; ++c)
                REQUIRE(grey16.texels[(size_t{y} * 19 + x) * 4 + c] == (c == 3 ? 255 : seed_pattern(x, y, 19, 11, 0)));
    const Rgba8Image palette = seed("png/palette.png"), bilevel = seed("png/bilevel.png");
    CHECK(palette.width == 16);
    CHECK(std::count(palette.texels.begin(), palette.texels.end(), uint8_t{0}) > 0);  // index 3 is transparent
    CHECK(bilevel.width == 9);
    CHECK(std::all_of(bilevel.texels.begin(), bilevel.texels.end(), [](uint8_t v) { return v == 0 || v == 255; }));
}

TEST_CASE("16-bit PNGs keep every bit for float formats; 8-bit images arrive as v / 255") {
    const ImageF fine = load_image_float(std::string(TVLM_FUZZ_DIR) + "/corpus/png/grey16_fine.png");
    REQUIRE(fine.width == 13);
    REQUIRE(fine.height == 7);
    REQUIRE(fine.channels == 4);
    for (uint32_t y = 0; y < 7; ++y)
        for (uint32_t x = 0; x < 13; ++x) {
            const float want = float((x * 4099 + y * 977) % 65536) / 65535.0f;
            for (uint32_t c = 0; c < 3; ++c) REQUIRE(fine.at(x, y, c) == want);
            REQUIRE(fine.at(x, y, 3) == 1.0f);
        }
    const ImageF rgba = load_image_float(std::string(TVLM_FUZZ_DIR) + "/corpus/png/rgba.png");
    const Rgba8Image bytes = seed("png/rgba.png");
    for (size_t i = 0; i < bytes.texels.size(); ++i) REQUIRE(rgba.texels[i] == float(bytes.texels[i]) / 255.0f);
}

TEST_CASE("JPEGs decode to RGBA8 close to what was encoded; CMYK is refused") {
    for (const char* name : {"jpeg/baseline.jpg", "jpeg/progressive.jpg"}) {
        CAPTURE(name);
        const Rgba8Image image = seed(name);
        CHECK(image.width == 37);
        CHECK(image.height == 23);
        CHECK(mean_error_to_pattern(image, 3) < 6.0);  // quality 90, chroma halved (a swapped channel: ~80)
    }
    const Rgba8Image grey = seed("jpeg/grey.jpg");
    CHECK(mean_error_to_pattern(grey, 1) < 4.0);
    CHECK_THROWS_WITH_AS(seed("jpeg/cmyk.jpg"), doctest::Contains("is a CMYK JPEG: texturevlm reads greyscale and RGB"),
                         Error);
}

TEST_CASE("hostile and broken files are refused with the reason, before their claims are allocated") {
    const std::string bad = std::string(TVLM_FUZZ_DIR) + "/regressions/";
    CHECK_THROWS_WITH_AS(load_image(bad + "png_20000x20000_header.png"),
                         doctest::Contains("is 20000x20000: sides must be 1..16384"), Error);
    // The audit's JPEG claims 16384^2 in a few hundred bytes: its data ends at once.
    CHECK_THROWS_WITH_AS(load_image(bad + "jpeg_16384x16384_header.jpg"), doctest::Contains("premature end of data"),
                         Error);
    CHECK_THROWS_WITH_AS(load_image(bad + "jpeg_16384x16384_header.jpg", 8192), doctest::Contains("16384x16384"),
                         Error);
    CHECK_THROWS_WITH_AS(load_image(bad + "jpeg_cut_in_half.jpg"), doctest::Contains("corrupt or truncated"), Error);
    CHECK_THROWS_WITH_AS(load_image(bad + "png_cut_in_half.png"), doctest::Contains("corrupt or truncated"), Error);
    CHECK_THROWS_WITH_AS(load_image(bad + "png_idat_short.png"), doctest::Contains("corrupt or truncated"), Error);
    CHECK_THROWS_WITH_AS(load_image(bad + "gif_not_supported.gif"), doctest::Contains("PNG and JPEG only"), Error);
    CHECK_THROWS_WITH_AS(load_image(bad + "png_splt_claims_gigabytes.png"),
                         doctest::Contains("sPLT chunk claims 1811939376 bytes"), Error);
    // Every file ever kept as a regression is refused cleanly (the sanitizer build runs this too).
    for (const auto& entry : fs::directory_iterator(bad)) {
        CAPTURE(entry.path().string());
        CHECK_THROWS_AS(load_image(entry.path().string()), Error);
    }
}

TEST_CASE("bad image paths give errors that name the file and the reason") {
    const fs::path dir = temp_dir();
    CHECK_THROWS_WITH_AS(load_image((dir / "missing.png").string()), doctest::Contains("No such file"), Error);
    CHECK_THROWS_WITH_AS(load_image(dir.string()), doctest::Contains("is a directory, not an image"), Error);
    write_file(dir / "empty.png", "");
    CHECK_THROWS_WITH_AS(load_image((dir / "empty.png").string()), doctest::Contains("empty.png' is empty"), Error);
    write_file(dir / "text.png", "this is not an image at all, just some text\n");
    CHECK_THROWS_WITH_AS(load_image((dir / "text.png").string()), doctest::Contains("not a readable PNG/JPEG"), Error);
    CHECK_THROWS_WITH_AS(write_png((dir / "no_such_dir" / "x.png").string(), make_test_chart(8, 8)),
                         doctest::Contains("cannot write PNG"), Error);
    fs::remove_all(dir);
}

TEST_CASE("the test chart is deterministic and full of detail") {
    const Rgba8Image a = make_test_chart(), b = make_test_chart();
    CHECK(a.width == kTestChartWidth);
    CHECK(a.texels == b.texels);
    std::set<uint8_t> reds;
    size_t horizontal_changes = 0;
    for (uint32_t y = 0; y < a.height; y += 7)
        for (uint32_t x = 1; x < a.width; ++x) {
            const size_t i = (size_t{y} * a.width + x) * 4;
            reds.insert(a.texels[i]);
            horizontal_changes += a.texels[i + 1] != a.texels[i - 4 + 1];
        }
    CHECK(reds.count(0) == 1);
    CHECK(reds.count(255) == 1);
    CHECK(reds.size() > 200);                                // gradients: most levels present
    CHECK(horizontal_changes > a.width * a.height / 7 / 4);  // fine detail everywhere
}
