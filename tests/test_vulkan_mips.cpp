// Vulkan mip chains (blit and box) against the CPU reference: every format, level and layer.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "engine/textures/half.h"
#include "tests/random_image.h"
#include "engine/mips/reference_mips.h"
#include "engine/textures/texture.h"
#include "tests/texture_compare.h"
#include "engine/textures/transfer.h"
#include "tests/vulkan_fixture.h"
#include "tests/vulkan_half_chain.h"

using namespace tvlm;
using namespace tvlm::test;

namespace {

struct Case {
    uint32_t width, height, layers;
};

// Uploads random layers, generates the chain, and checks every level of every layer: level
// 0 equals the upload exactly, level l follows check_levels() (texture_compare.h). Blits are
// not bit-exact: lavapipe filters UNORM8 blits in 8-bit fixed point and lands 0 or +1 LSB
// from the exact 2x2 box (measured on every residue of the 4-texel sum); NVIDIA's blit was
// seen exact (../shared/interop-facts.md).
void check_chain(Context& context, Format format, MipFilter filter, Case c) {
    CAPTURE(format_info(format).name);
    CAPTURE(mip_filter_name(filter));
    CAPTURE(c.width);
    CAPTURE(c.height);
    CAPTURE(c.layers);
    Texture texture = Texture::create(context, TextureDesc::sampled_array(c.width, c.height, c.layers, format));
    std::vector<ImageF> bases;
    for (uint32_t layer = 0; layer < c.layers; ++layer) {
        bases.push_back(random_image(c.width, c.height, format, 1000 * layer + c.width * 7 + c.height));
        upload(context, texture, host_pixels(bases.back()), {.layer = layer});
    }
    generate_mips(context, texture, filter);
    for (uint32_t layer = 0; layer < c.layers; ++layer) {
        CAPTURE(layer);
        REQUIRE(mismatches(bases[layer], readback_image(context, texture, 0, layer), format, Weights::exact, true) ==
                0);
        check_levels([&](uint32_t level) { return readback_image(context, texture, level, layer); }, texture.levels(),
                     c.width, c.height, format, filter);
    }
}

// Odd, prime, non-square, thin, layered; 640x384 and 1000x600 chain several 2:1 levels
// in one pass and then switch to odd ratios; 131x257 crosses tiles with odd levels.
constexpr Case kSizes[] = {{1, 1, 1},     {1, 13, 1},    {13, 1, 1},    {5, 3, 1},   {13, 9, 1},
                           {64, 48, 1},   {96, 33, 1},   {4097, 3, 1},  {19, 11, 7}, {6, 10, 64},
                           {131, 257, 1}, {640, 384, 2}, {1000, 600, 1}};

}  // namespace

TEST_CASE_FIXTURE(VulkanFixture, "mips on the GPU match the reference: every format, filter and size") {
    for (Format format : kAllFormats)
        for (MipFilter filter : {MipFilter::blit, MipFilter::box})
            for (Case c : kSizes) check_chain(context, format, filter, c);
}

// Threads sharing one Context, each with textures of its own (what separate Python pyramids
// on one device are): uploads, box chains and readbacks run at once on the context's queue,
// and every chain is still the reference's. The threads only run the GPU work; the checks
// run afterwards on this thread.
TEST_CASE_FIXTURE(VulkanFixture, "threads with textures of their own on one context get the reference chains") {
    constexpr uint32_t kThreads = 8, kRounds = 6;
    struct Work {
        Case size;
        std::vector<ImageF> bases;
        std::vector<std::vector<ImageF>> chains;  // per round: every level
        std::string error;
    };
    std::vector<Work> work(kThreads);
    for (uint32_t t = 0; t < kThreads; ++t) {
        work[t].size = {37 + 11 * t, 29 + 5 * t, 1};
        for (uint32_t r = 0; r < kRounds; ++r)
            work[t].bases.push_back(
                random_image(work[t].size.width, work[t].size.height, Format::rgba8_unorm, 100 * t + r));
    }
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            Work& w = work[t];
            try {
                for (uint32_t r = 0; r < kRounds; ++r) {
                    Texture texture = Texture::create(
                        context, TextureDesc::sampled_array(w.size.width, w.size.height, 1, Format::rgba8_unorm));
                    upload(context, texture, host_pixels(w.bases[r]), {});
                    generate_mips(context, texture, MipFilter::box);
                    std::vector<ImageF>& chain = w.chains.emplace_back();
                    for (uint32_t level = 0; level < texture.levels(); ++level)
                        chain.push_back(readback_image(context, texture, level, 0));
                }
            } catch (const std::exception& e) { w.error = e.what(); }
        });
    for (std::thread& thread : threads) thread.join();
    for (uint32_t t = 0; t < kThreads; ++t) {
        CAPTURE(t);
        const Work& w = work[t];
        REQUIRE(w.error.empty());
        REQUIRE(w.chains.size() == kRounds);
        for (uint32_t r = 0; r < kRounds; ++r) {
            CAPTURE(r);
            REQUIRE(mismatches(w.bases[r], w.chains[r][0], Format::rgba8_unorm, Weights::exact, true) == 0);
            check_levels([&](uint32_t level) { return w.chains[r][level]; }, uint32_t(w.chains[r].size()), w.size.width,
                         w.size.height, Format::rgba8_unorm, MipFilter::box);
        }
    }
}

// The whole chain against the reference chain (errors would compound here): bit for bit.
TEST_CASE_FIXTURE(VulkanFixture,
                  "8-bit box chains equal the reference chain bit for bit: 2048^2 and odd 1999x1531, uniform and "
                  "narrow-window texels") {
    // lavapipe (subgroups of 8) and NVIDIA's driver run the packed word shaders; without
    // them this suite would test only the general shader.
    REQUIRE(context.subgroup_shuffles());
    for (Format format : {Format::rgba8_unorm, Format::rgba8_srgb})
        for (Extent2D size : {Extent2D{2048, 2048}, Extent2D{1999, 1531}})
            for (bool narrow : {false, true}) {
                CAPTURE(format_info(format).name);
                CAPTURE(size.width);
                CAPTURE(narrow);
                const ImageF base = narrow ? narrow_window_image(size.width, size.height, format, 43)
                                           : random_image(size.width, size.height, format, 42);
                Texture texture = Texture::create(context, TextureDesc::sampled_2d(size.width, size.height, format));
                upload(context, texture, host_pixels(base));
                generate_mips(context, texture, MipFilter::box);
                const auto reference = reference_mip_chain(base, format, MipFilter::box, texture.levels());
                for (uint32_t level = 0; level < texture.levels(); ++level) {
                    CAPTURE(level);
                    CHECK(mismatches(reference[level], readback_image(context, texture, level), format, Weights::exact,
                                     true) == 0);
                }
            }
}

// float16 chains, through the packed word shader where levels halve: subnormals, the
// largest finite values (whose averages overflow to infinity nowhere, and round at the
// top), negatives, both infinities (which meet as NaN), NaNs, averages that fall on ties
// and sums that are not exact in float (random_image.h special_half_image), bit for bit
// (any NaN equals any NaN: the sign of a NaN is not specified).
TEST_CASE_FIXTURE(
    VulkanFixture,
    "float16 box chains with subnormal, huge, negative, tied and cancelling values equal the reference bit for bit") {
    REQUIRE(context.subgroup_shuffles());  // the packed RGBA16F shader runs (lavapipe and NVIDIA),
    REQUIRE(context.ieee_float16());       // rounding by conversion (test_vulkan_host: in integer steps)
    for (Extent2D size : {Extent2D{256, 128}, Extent2D{96, 64}})
        check_special_half_chain(context, size.width, size.height, 7);
}

TEST_CASE_FIXTURE(VulkanFixture, "2048x2048 blits stay within the tolerance on every level, every format") {
    for (Format format : kAllFormats) check_chain(context, format, MipFilter::blit, {2048, 2048, 1});
}

TEST_CASE_FIXTURE(VulkanFixture, "blit skips a source texel on 5 -> 2, box does not") {
    std::vector<uint8_t> row(5 * 4, 0);
    for (size_t c = 0; c < 4; ++c) row[2 * 4 + c] = 255;  // only the middle texel is lit
    for (MipFilter filter : {MipFilter::blit, MipFilter::box}) {
        Texture texture = Texture::create(context, TextureDesc::sampled_2d(5, 1, Format::rgba8_unorm, 2));
        upload(context, texture, host_pixels(row, 5, 1));
        generate_mips(context, texture, filter);
        const auto level1 = readback(context, texture, 1);
        if (filter == MipFilter::blit) {
            CHECK(level1[0] == 0);
            CHECK(level1[4] == 0);
        } else {
            CHECK(level1[0] == 51);  // 0.5 * 255 / 2.5
            CHECK(level1[4] == 51);
        }
    }
}

TEST_CASE_FIXTURE(VulkanFixture, "a rectangle upload changes only that rectangle of one layer") {
    Texture texture = Texture::create(context, TextureDesc::sampled_array(40, 30, 3, Format::rgba8_unorm, 1));
    const ImageF base0 = random_image(40, 30, Format::rgba8_unorm, 1);
    const ImageF base1 = random_image(40, 30, Format::rgba8_unorm, 2);
    upload(context, texture, host_pixels(base0), {.layer = 0});
    upload(context, texture, host_pixels(base1), {.layer = 1});
    const ImageF patch = random_image(7, 5, Format::rgba8_unorm, 3);
    upload(context, texture, host_pixels(patch), {.layer = 1, .x = 30, .y = 20});
    const ImageF layer0 = readback_image(context, texture, 0, 0);
    const ImageF layer1 = readback_image(context, texture, 0, 1);
    CHECK(layer0.texels == base0.texels);
    for (uint32_t y = 0; y < 30; ++y)
        for (uint32_t x = 0; x < 40; ++x)
            for (uint32_t c = 0; c < 4; ++c) {
                const bool inside = x >= 30 && x < 37 && y >= 20 && y < 25;
                REQUIRE(layer1.at(x, y, c) == (inside ? patch.at(x - 30, y - 20, c) : base1.at(x, y, c)));
            }
}

// Video-style updates: a random rectangle of level 0 changes, only its dependents are
// recomputed, and every level must equal the reference chain of the new level 0.
TEST_CASE_FIXTURE(VulkanFixture, "box partial regeneration equals full regeneration for random rectangles") {
    std::mt19937 rng(7);
    const auto below = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
    for (Format format : {Format::rgba8_unorm, Format::rgba8_srgb, Format::rgba32f})
        for (Case c : {Case{1000, 600, 2}, Case{131, 257, 1}, Case{512, 512, 1}}) {
            CAPTURE(format_info(format).name);
            CAPTURE(c.width);
            CAPTURE(c.height);
            Texture texture = Texture::create(context, TextureDesc::sampled_array(c.width, c.height, c.layers, format));
            std::vector<ImageF> bases;
            for (uint32_t layer = 0; layer < c.layers; ++layer) {
                bases.push_back(random_image(c.width, c.height, format, 10 + layer));
                upload(context, texture, host_pixels(bases[layer]), {.layer = layer});
            }
            generate_mips(context, texture, MipFilter::box);
            for (int round = 0; round < 3; ++round) {
                CAPTURE(round);
                const uint32_t w = 1 + below(std::min(c.width, 300u)), h = 1 + below(std::min(c.height, 300u));
                const uint32_t x = below(c.width - w + 1), y = below(c.height - h + 1);
                const uint32_t layer = below(c.layers);
                const ImageF patch = random_image(w, h, format, 100 + static_cast<uint32_t>(round));
                upload(context, texture, host_pixels(patch), {.layer = layer, .x = x, .y = y});
                for (uint32_t py = 0; py < h; ++py)
                    for (uint32_t px = 0; px < w; ++px)
                        for (uint32_t ch = 0; ch < patch.channels; ++ch)
                            bases[layer].at(x + px, y + py, ch) = patch.at(px, py, ch);
                update_mips(context, texture, {.x = x, .y = y, .width = w, .height = h, .first_layer = layer});
                const auto reference = reference_mip_chain(bases[layer], format, MipFilter::box, texture.levels());
                for (uint32_t level = 0; level < texture.levels(); ++level) {
                    CAPTURE(level);
                    std::string first;
                    const size_t bad = box_mismatches(reference[level], readback_image(context, texture, level, layer),
                                                      format, &first);
                    REQUIRE_MESSAGE(bad == 0, bad, " texels differ; first: ", first);
                }
            }
        }
}

TEST_CASE_FIXTURE(VulkanFixture, "partial regeneration rejects empty and outside regions, changing nothing") {
    Texture texture = Texture::create(context, TextureDesc::sampled_array(64, 32, 2, Format::rgba8_unorm));
    upload(context, texture, host_pixels(random_image(64, 32, Format::rgba8_unorm, 3)));
    generate_mips(context, texture, MipFilter::box);
    const ImageF before = readback_image(context, texture, 1);
    for (DirtyRegion bad :
         {DirtyRegion{.width = 0, .height = 4}, DirtyRegion{.width = 4, .height = 4, .layers = 0},
          DirtyRegion{.x = 60, .width = 5, .height = 1}, DirtyRegion{.y = 32, .width = 1, .height = 1},
          DirtyRegion{.width = 1, .height = 1, .first_layer = 1, .layers = 2}}) {
        CHECK_THROWS_WITH_AS(update_mips(context, texture, bad), doctest::Contains("region"), Error);
    }
    CHECK(readback_image(context, texture, 1).texels == before.texels);
}
