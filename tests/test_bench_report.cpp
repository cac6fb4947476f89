// Benchmark reports need no GPU: the --plot bar chart and the --json rows from known rows.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "apps/bench/bench_plot.h"
#include "apps/bench/bench_rows.h"

using namespace tvlm;

namespace {

// Pixels of exactly this colour in the chart.
size_t count_colour(const Rgba8Image& image, uint8_t r, uint8_t g, uint8_t b) {
    size_t n = 0;
    for (size_t i = 0; i < image.texels.size(); i += 4)
        n += image.texels[i] == r && image.texels[i + 1] == g && image.texels[i + 2] == b;
    return n;
}

// Length in pixels of the bar of colour (r, g, b) on image row y.
int bar_length(const Rgba8Image& image, uint32_t y, uint8_t r, uint8_t g, uint8_t b) {
    int n = 0;
    for (uint32_t x = 470; x < image.width; ++x) {
        const uint8_t* p = &image.texels[(size_t{y} * image.width + x) * 4];
        n += p[0] == r && p[1] == g && p[2] == b;
    }
    return n;
}

}  // namespace

TEST_CASE("--plot: a bar per row, longer for slower methods on a log scale, one colour per method") {
    const std::vector<Row> rows = {{"full chain, 4096^2", "CUDA box", 40, 39, 20},
                                   {"full chain, 4096^2", "Vulkan blit", 400, 390, 20},
                                   {"1024^2", "CUDA box", 8, 8, 1.4}};
    const Rgba8Image chart = bar_chart("tvlm bench mips", rows);
    REQUIRE(chart.width == 1400);
    REQUIRE(chart.height > 100);
    // The first method's colour (blue) and the second's (orange) are both drawn.
    CHECK(count_colour(chart, 31, 119, 180) > 500);
    CHECK(count_colour(chart, 255, 127, 14) > 500);
    // Rows of the first job: the group label, then CUDA (y 76..) and blit (y 92..).
    const int cuda = bar_length(chart, 60 + 16 + 8, 31, 119, 180);
    const int blit = bar_length(chart, 60 + 32 + 8, 255, 127, 14);
    CHECK(cuda > 50);
    // 10x slower is one decade further: log10(400) - log10(40) of the scale's decades.
    CHECK(blit > cuda);
    CHECK(blit - cuda == doctest::Approx(800.0 / 3.0).epsilon(0.05));  // scale 1 us .. 1000 us: 3 decades
    // The chart round-trips through PNG.
    const std::string path = (std::filesystem::temp_directory_path() / "tvlm_test_chart.png").string();
    write_png(path, chart);
    CHECK(std::filesystem::file_size(path) > 1000);
    std::filesystem::remove(path);
}

TEST_CASE("--json rows: every row with its job, method, times and floor") {
    const std::string path = (std::filesystem::temp_directory_path() / "tvlm_test_rows.json").string();
    write_rows_json(path, {"Test GPU", "580", 4.1e12, 55e9}, {{"job \"a\"", "m", 1.5, 1.25, 0.5, "mips"}});
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    CHECK(text.str().find("\"suite\": \"mips\"") != std::string::npos);
    CHECK(text.str().find("\"job\": \"job \\\"a\\\"\"") != std::string::npos);
    CHECK(text.str().find("\"median_us\": 1.5") != std::string::npos);
    CHECK(text.str().find("\"device_copy_tb_s\": 4.1") != std::string::npos);
    CHECK(text.str().find("\"pinned_upload_gb_s\": 55") != std::string::npos);
    std::filesystem::remove(path);
    CHECK_THROWS(write_rows_json("/nonexistent/dir/x.json", {}, {}));
}

TEST_CASE("--plot of several suites: one chart per suite, stacked in one image") {
    const Rgba8Image a = bar_chart("mips", {{"job", "CUDA box", 40, 39, 20, "mips"}});
    const Rgba8Image b = bar_chart("video",
                                   {{"job", "CUDA", 400, 390, 20, "video"}, {"job 2", "GL", 900, 800, 20, "video"}},
                                   "median wall time per frame");
    const Rgba8Image both = stack_charts({a, b});
    REQUIRE(both.width == a.width);
    REQUIRE(both.height == a.height + b.height);
    REQUIRE(both.texels.size() == size_t{both.width} * both.height * 4);
    CHECK(std::equal(b.texels.begin(), b.texels.end(),
                     both.texels.begin() + static_cast<std::ptrdiff_t>(a.texels.size())));
    CHECK(b.height > a.height);  // more jobs, taller
}
