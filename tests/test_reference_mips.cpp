#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/mips/box_filter.h"
#include "engine/error.h"
#include "engine/textures/color.h"
#include "tests/random_image.h"
#include "engine/mips/reference_mips.h"
#include "shaders/srgb8_buckets.h"

using namespace tvlm;
using tvlm::test::random_image;

namespace {
double mean(const ImageF& image, uint32_t c) {
    double sum = 0;
    for (uint32_t y = 0; y < image.height; ++y)
        for (uint32_t x = 0; x < image.width; ++x) sum += image.at(x, y, c);
    return sum / (static_cast<double>(image.width) * image.height);
}
}  // namespace

TEST_CASE("level sizes: max(1, W>>l) and the full count") {
    CHECK(level_extent(4097, 3, 1) == Extent2D{2048, 1});
    CHECK(level_extent(4097, 3, 12) == Extent2D{1, 1});
    CHECK(full_mip_count(4097, 3) == 13);
    CHECK(full_mip_count(1, 1) == 1);
    CHECK(full_mip_count(1, 1024) == 11);
}

TEST_CASE("reference: even sizes are exact 2x2 boxes, for blit and box alike") {
    const ImageF base = random_image(8, 6, Format::rgba32f, 1);
    for (MipFilter filter : {MipFilter::blit, MipFilter::box}) {
        const ImageF next = reference_downsample(base, {4, 3}, filter, Format::rgba32f);
        for (uint32_t y = 0; y < 3; ++y)
            for (uint32_t x = 0; x < 4; ++x)
                for (uint32_t c = 0; c < 4; ++c) {
                    const double box = (double{base.at(2 * x, 2 * y, c)} + base.at(2 * x + 1, 2 * y, c) +
                                        base.at(2 * x, 2 * y + 1, c) + base.at(2 * x + 1, 2 * y + 1, c)) /
                                       4.0;
                    REQUIRE(next.at(x, y, c) == doctest::Approx(box).epsilon(1e-7));
                }
    }
}

TEST_CASE("reference: blit on odd sizes follows the spec formula and skips texels") {
    // 5 -> 2: destination texel i samples at (i+0.5)*2.5: weights 1/4,3/4 | 3/4,1/4, texel 2 unused.
    ImageF row(5, 1, 1);
    row.texels = {1.0f, 2.0f, 100.0f, 4.0f, 8.0f};
    const ImageF blit = reference_downsample(row, {2, 1}, MipFilter::blit, Format::r32f);
    CHECK(blit.at(0, 0, 0) == doctest::Approx(0.25 * 1 + 0.75 * 2));
    CHECK(blit.at(1, 0, 0) == doctest::Approx(0.75 * 4 + 0.25 * 8));
    // box drops nothing: [0, 2.5] and [2.5, 5] of the row.
    const ImageF box = reference_downsample(row, {2, 1}, MipFilter::box, Format::r32f);
    CHECK(box.at(0, 0, 0) == doctest::Approx((1 + 2 + 0.5 * 100) / 2.5));
    CHECK(box.at(1, 0, 0) == doctest::Approx((0.5 * 100 + 4 + 8) / 2.5));
    // 3 -> 1: blit takes the centre texel only.
    ImageF three(3, 1, 1);
    three.texels = {5.0f, 7.0f, 9.0f};
    CHECK(reference_downsample(three, {1, 1}, MipFilter::blit, Format::r32f).at(0, 0, 0) == doctest::Approx(7.0));
    CHECK(reference_downsample(three, {1, 1}, MipFilter::box, Format::r32f).at(0, 0, 0) == doctest::Approx(7.0));
    three.texels = {5.0f, 7.0f, 30.0f};
    CHECK(reference_downsample(three, {1, 1}, MipFilter::blit, Format::r32f).at(0, 0, 0) == doctest::Approx(7.0));
    CHECK(reference_downsample(three, {1, 1}, MipFilter::box, Format::r32f).at(0, 0, 0) == doctest::Approx(14.0));
}

TEST_CASE("reference: box preserves the mean on odd, prime and non-square sizes") {
    for (auto [w, h] :
         {std::pair{13u, 7u}, std::pair{5u, 1u}, std::pair{1u, 9u}, std::pair{31u, 17u}, std::pair{4097u, 3u}}) {
        CAPTURE(w);
        CAPTURE(h);
        const ImageF base = random_image(w, h, Format::rgba32f, w * 31 + h);
        const ImageF next = reference_downsample(base, level_extent(w, h, 1), MipFilter::box, Format::rgba32f);
        for (uint32_t c = 0; c < 4; ++c) CHECK(mean(next, c) == doctest::Approx(mean(base, c)).epsilon(1e-6));
        // blit does not: it is not an area filter on odd sizes (which is the point of box).
    }
}

TEST_CASE("reference: sRGB averages in linear light, alpha stays linear") {
    ImageF pair(2, 1, 4);
    pair.texels = {0, 0, 0, 0, 1, 1, 1, 1};
    for (MipFilter filter : {MipFilter::blit, MipFilter::box}) {
        const auto chain = reference_mip_chain(pair, Format::rgba8_srgb, filter, 2);
        const ImageF& l1 = chain[1];
        // linear 0.5 encodes to 0.7354 -> 187.5 -> 188 (UNORM gives 128).
        CHECK(std::lround(l1.at(0, 0, 0) * 255.0) == 188);
        CHECK(std::lround(l1.at(0, 0, 3) * 255.0) == 128);
        const auto unorm = reference_mip_chain(pair, Format::rgba8_unorm, filter, 2);
        CHECK(std::lround(unorm[1].at(0, 0, 0) * 255.0) == 128);
    }
    CHECK(linear_to_srgb(srgb_to_linear(0.3)) == doctest::Approx(0.3));
}

TEST_CASE("reference chain: every level is quantised to the format, down to 1x1") {
    const ImageF base = random_image(37, 12, Format::rgba8_unorm, 5);
    const auto chain = reference_mip_chain(base, Format::rgba8_unorm, MipFilter::box, full_mip_count(37, 12));
    REQUIRE(chain.size() == 6);
    CHECK(chain.back().width == 1);
    CHECK(chain.back().height == 1);
    for (const ImageF& level : chain)
        for (float v : level.texels) REQUIRE(v * 255.0f == doctest::Approx(std::round(v * 255.0f)).epsilon(1e-6));
}

TEST_CASE("box arithmetic: the sRGB tables follow the transfer functions, rounding is exact") {
    for (uint32_t b = 0; b < 256; ++b)
        REQUIRE(srgb8_linear(b) == static_cast<uint32_t>(std::lround(srgb_to_linear(b / 255.0) * 16777216.0)));
    // Every byte encodes to itself; a hair below a threshold rounds down, at it rounds up.
    for (uint32_t b = 0; b < 256; ++b) REQUIRE(srgb8_encode(srgb8_linear(b), 1) == b);
    for (uint32_t k = 0; k < 255; ++k) {
        const double t = std::ceil(srgb_to_linear((k + 0.5) / 255.0) * 16777216.0);
        REQUIRE(srgb8_encode(t, 1) == k + 1);
        REQUIRE(srgb8_encode(3 * t - 1, 3) == k);
    }
    CHECK(unorm8_round(2, 4) == 1);  // 0.5 rounds up
    CHECK(unorm8_round(5, 4) == 1);  // 1.25
    CHECK(unorm8_round(6, 4) == 2);  // 1.5 rounds up
    CHECK(unorm8_round(1020, 4) == 255);
}

// The packed kernels (CUDA and Vulkan) encode with one read of a carry word
// (srgb8_buckets.h): every sum up to 2^26, as m = 4n, against the count of thresholds it
// reaches, kept as n climbs; the buffer the general shader reads holds the linear values
// (4 x) and the thresholds.
TEST_CASE("box arithmetic: the sRGB carry words encode every sum of four linear values") {
    const Srgb8TableWords words = make_srgb8_table_words();
    for (uint32_t b = 0; b < 256; ++b) REQUIRE(words.packed.linear4[b] == 4 * srgb8_linear(b));
    for (uint32_t k = 0; k < 255; ++k) REQUIRE(words.threshold[k] == kSrgb8Thresholds[k]);
    uint32_t reached = 0, wrong = 0;
    for (uint32_t n = 0; n <= (1u << 26); ++n) {
        while (reached < 255 && n >= 4 * kSrgb8Thresholds[reached]) ++reached;
        const uint32_t m = 4 * n;
        wrong += (words.packed.carry[srgb8_carry_bucket(m)] + m) >> 24 != reached;
    }
    CHECK(reached == 255);
    CHECK(wrong == 0);
    CHECK(srgb8_carry_bucket(4 * 4 * srgb8_linear(255)) == kSrgb8CarryBuckets - 1);  // the largest sum
    CHECK(srgb8_encode(double(4 * kSrgb8Thresholds[100]), 4) == 101);  // the same thresholds as srgb8_encode's
}

TEST_CASE("box taps: exact areas that sum to the source size, and the texels that depend on a range") {
    for (uint32_t s : {1u, 2u, 3u, 5u, 8u, 13u, 4097u}) {
        CAPTURE(s);
        const uint32_t d = std::max(1u, s >> 1);
        std::vector<uint64_t> covered(s, 0);
        for (uint32_t i = 0; i < d; ++i) {
            const BoxTaps t = box_taps(i, s);
            uint32_t sum = 0;
            for (uint32_t a = 0; a < t.count; ++a) {
                sum += t.weight[a];
                covered[t.first + a] += t.weight[a];
            }
            REQUIRE(sum == t.sum);
        }
        // A source texel spans d units when the ratio is odd (weights are areas in 1/d
        // texels), else it is tapped once with weight 1.
        const uint64_t whole = s % 2 == 1 && s > 1 ? d : 1;
        for (uint32_t j = 0; j < s; ++j) REQUIRE(covered[j] == whole);
        // Dependents of every single texel are exactly the destination texels tapping it.
        for (uint32_t j = 0; j < s; ++j) {
            const IndexRange r = box_dependents(j, j + 1, s);
            for (uint32_t i = 0; i < d; ++i) {
                const BoxTaps t = box_taps(i, s);
                const bool taps = j >= t.first && j < t.first + t.count && t.weight[j - t.first] > 0;
                REQUIRE(taps == (i >= r.first && i < r.end));
            }
        }
    }
}

TEST_CASE("box tails: the last passes run as one tail where each level fits its shared array") {
    // 1920x1080: three halving levels to 240x135, then a pass per odd level.
    const uint32_t levels = full_mip_count(1920, 1080);
    const std::vector<BoxPass> video = plan_box_passes(1920, 1080, levels, {0, 0, 1920, 1080});
    REQUIRE(video.size() >= 4);
    const auto tail_source = [&](const std::vector<BoxPass>& passes, const BoxTailLimits& limits, uint32_t w,
                                 uint32_t h) {
        const size_t p = first_box_tail_pass(w, h, full_mip_count(w, h), passes, limits);
        return p < passes.size() ? passes[p].src_level : ~0u;
    };
    // Vulkan's tail (1024 and 256 texels, six levels) starts at 60x33 -> 30x16 ...
    const BoxTailLimits vulkan{1024, 256, 6};
    CHECK(tail_source(video, vulkan, 1920, 1080) == 5);
    // ... CUDA's (4096 and 1024 texels) one level earlier, 120x67 -> 60x33.
    const BoxTailLimits cuda{4096, 1024, 16};
    CHECK(tail_source(video, cuda, 1920, 1080) == 4);
    // 8190x3: level 1 (4095x1) fits 4096 texels but level 2 (2047x1) not 1024, so the tail
    // starts where level 2 of it fits.
    const std::vector<BoxPass> wide = plan_box_passes(8190, 3, full_mip_count(8190, 3), {0, 0, 8190, 3});
    CHECK(tail_source(wide, cuda, 8190, 3) == 1);
    // A tail that would be the last pass alone saves nothing: none.
    const std::vector<BoxPass> square = plan_box_passes(64, 64, 7, {0, 0, 64, 64});
    CHECK(first_box_tail_pass(64, 64, 7, square, cuda) == square.size());
}

TEST_CASE("box passes: six halving levels per pass, new passes at odd sizes, dirty rectangles cover their dependents") {
    // 4096^2: levels 1..6 from level 0 over 64x64 tiles of level 1, then 7..12 in one tile.
    const std::vector<BoxPass> full = plan_box_passes(4096, 4096, 13, {0, 0, 4096, 4096});
    REQUIRE(full.size() == 2);
    CHECK(full[0].src_level == 0);
    CHECK(full[0].levels == 6);
    CHECK(full[0].tiles_x == 64);
    CHECK(full[0].tiles_y == 64);
    CHECK(full[1].src_level == 6);
    CHECK(full[1].levels == 6);
    CHECK(full[1].tiles_x == 1);
    // 1000x600: 500x300 -> 250x150 -> 125x75 halve; 125x75 is odd, so a new pass starts there.
    const std::vector<BoxPass> odd = plan_box_passes(1000, 600, full_mip_count(1000, 600), {0, 0, 1000, 600});
    REQUIRE(odd.size() >= 2);
    CHECK(odd[0].levels == 3);
    CHECK(odd[1].src_level == 3);
    uint32_t covered = 0;
    for (const BoxPass& p : odd) {
        CHECK(p.src_level == covered);
        covered += p.levels;
    }
    CHECK(covered + 1 == full_mip_count(1000, 600));  // every level is written exactly once
    // A 256^2 rectangle at (1000, 1000): level 1 texels 500..627 -> tiles 15..19 of 32.
    const std::vector<BoxPass> dirty = plan_box_passes(4096, 4096, 13, {1000, 1000, 1256, 1256});
    REQUIRE(dirty.size() == 2);
    CHECK(dirty[0].tile_x == 15);
    CHECK(dirty[0].tiles_x == 5);
    CHECK(dirty[0].tile_y == 15);
    CHECK(dirty[1].tiles_x == 1);
    // A one-texel change on an odd axis touches the two destination texels that share it.
    const IndexRange shared = box_dependents(2, 3, 5);  // 5 -> 2: texel 2 is split between both
    CHECK(shared.first == 0);
    CHECK(shared.end == 2);
}

// A changed region is refused when empty on any one axis, and checked on both sides of each
// edge: the last texel, row and layer are inside, one past is outside.
TEST_CASE("checked_dirty_rect: empty on any one axis, and each edge at the limit and one past") {
    using tvlm::DirtyRegion;
    const auto check = [](DirtyRegion r) { return tvlm::checked_dirty_rect(r, 10, 8, 3); };
    for (const DirtyRegion empty :
         {DirtyRegion{0, 0, 0, 4, 0, 1}, DirtyRegion{0, 0, 4, 0, 0, 1}, DirtyRegion{0, 0, 4, 4, 0, 0}})
        CHECK_THROWS_WITH_AS(check(empty), doctest::Contains("the changed region is empty"), tvlm::Error);
    CHECK(check({9, 7, 1, 1, 2, 1}) == tvlm::TexelRect{9, 7, 10, 8});  // the last texel of the last layer
    CHECK(check({0, 0, 10, 8, 0, 3}) == tvlm::TexelRect{0, 0, 10, 8});
    for (const DirtyRegion outside :
         {DirtyRegion{10, 0, 1, 1, 0, 1}, DirtyRegion{9, 0, 2, 1, 0, 1}, DirtyRegion{0, 8, 1, 1, 0, 1},
          DirtyRegion{0, 7, 1, 2, 0, 1}, DirtyRegion{0, 0, 1, 1, 3, 1}, DirtyRegion{0, 0, 1, 1, 2, 2},
          DirtyRegion{11, 0, 1, 1, 0, 1}, DirtyRegion{0, 9, 1, 1, 0, 1}})
        CHECK_THROWS_WITH_AS(check(outside), doctest::Contains("lies outside the"), tvlm::Error);
}
