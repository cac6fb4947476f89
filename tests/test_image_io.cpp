// Image files and the embedded test chart.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "error.h"
#include "image_io.h"
#include "test_chart.h"

using namespace tvlm;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
    const fs::path dir = fs::temp_directory_path() / ("tvlm_test_io_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir;
}

void write_file(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("PNG round trip keeps every byte") {
    const fs::path dir = temp_dir();
    const Rgba8Image chart = make_test_chart(64, 48);
    save_png((dir / "chart.png").string(), chart);
    const Rgba8Image back = load_image((dir / "chart.png").string());
    CHECK(back.width == 64);
    CHECK(back.height == 48);
    CHECK(back.texels == chart.texels);
    CHECK_FALSE(fs::exists(dir / "chart.png.partial"));
    fs::remove_all(dir);
}

TEST_CASE("bad image files give errors that name the file and the reason") {
    const fs::path dir = temp_dir();
    CHECK_THROWS_WITH_AS(load_image((dir / "missing.png").string()), doctest::Contains("No such file"), Error);
    write_file(dir / "empty.png", "");
    CHECK_THROWS_WITH_AS(load_image((dir / "empty.png").string()), doctest::Contains("empty.png"), Error);
    write_file(dir / "text.png", "this is not an image at all, just some text\n");
    CHECK_THROWS_WITH_AS(load_image((dir / "text.png").string()), doctest::Contains("not a readable PNG/JPEG"), Error);

    save_png((dir / "good.png").string(), make_test_chart(64, 48));
    const std::string good = read_file(dir / "good.png");
    write_file(dir / "truncated.png", good.substr(0, good.size() / 2));
    CHECK_THROWS_WITH_AS(load_image((dir / "truncated.png").string()), doctest::Contains("truncated.png"), Error);

    // A header that claims 9000 x 9000 is refused (limit 8192) before anything is decoded.
    std::string huge = good;
    const unsigned char side[4] = {0x00, 0x00, 0x23, 0x28};  // 9000, big-endian IHDR fields
    huge.replace(16, 4, reinterpret_cast<const char*>(side), 4);
    huge.replace(20, 4, reinterpret_cast<const char*>(side), 4);
    write_file(dir / "huge.png", huge);
    CHECK_THROWS_WITH_AS(load_image((dir / "huge.png").string(), 8192), doctest::Contains("9000x9000"), Error);

    CHECK_THROWS_WITH_AS(save_png((dir / "no_such_dir" / "x.png").string(), make_test_chart(8, 8)),
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
