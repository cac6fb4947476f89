// Vulkan mip chains (blit and box) against the CPU reference: every format, level and layer.
#include <doctest/doctest.h>

#include <vector>

#include "generate_mips.h"
#include "random_image.h"
#include "texture.h"
#include "texture_compare.h"
#include "transfer.h"
#include "vulkan_fixture.h"

using namespace tvlm;
using namespace tvlm::test;

namespace {

struct Case {
    uint32_t width, height, layers;
};

// Uploads random layers, generates the chain, and checks every level of every layer:
//  - level 0 equals the upload exactly;
//  - level l equals the reference filter applied to the GPU's own level l-1 (so errors do
//    not compound): bit-exact for the box shader on RGBA8 UNORM with exact 2:1 ratios, else
//    within tolerance.h (hardware weights for blits). Blits are not bit-exact: lavapipe filters UNORM8 blits
//    in 8-bit fixed point and lands 0 or +1 LSB from the exact 2x2 box (measured on every
//    residue of the 4-texel sum); NVIDIA's blit was seen exact (../shared/interop-facts.md).
void check_chain(Context& context, Format format, MipFilter filter, Case c) {
    CAPTURE(format_info(format).name);
    CAPTURE(mip_filter_name(filter));
    CAPTURE(c.width); CAPTURE(c.height); CAPTURE(c.layers);
    Texture texture = Texture::create(context, TextureDesc::sampled_array(c.width, c.height, c.layers, format));
    std::vector<ImageF> bases;
    for (uint32_t layer = 0; layer < c.layers; ++layer) {
        bases.push_back(random_image(c.width, c.height, format, 1000 * layer + c.width * 7 + c.height));
        upload(context, texture, host_pixels(bases.back()), {.layer = layer});
    }
    generate_mips(context, texture, filter);
    for (uint32_t layer = 0; layer < c.layers; ++layer) {
        CAPTURE(layer);
        ImageF previous = readback_image(context, texture, 0, layer);
        REQUIRE(mismatches(bases[layer], previous, format, Weights::exact, true) == 0);
        for (uint32_t level = 1; level < texture.levels(); ++level) {
            CAPTURE(level);
            const ImageF actual = readback_image(context, texture, level, layer);
            const ImageF expected = reference_downsample(previous, texture.extent(level), filter, format);
            const bool ratio_exact = exact_ratio(texture.extent(level - 1), texture.extent(level));
            const bool bit_exact = format == Format::rgba8_unorm && ratio_exact && filter == MipFilter::box;
            // Blit weights come from the sampler's coordinate hardware even on 2:1 ratios
            // (lavapipe's rgba32f blits land ~1e-6 off an exact 0.5/0.5 mix).
            const Weights weights = filter == MipFilter::blit ? Weights::hardware : Weights::exact;
            std::string first;
            const size_t bad = mismatches(expected, actual, format, weights, bit_exact, &first);
            CHECK_MESSAGE(bad == 0, bad, " texels differ; first: ", first);
            previous = actual;
        }
    }
}

constexpr Case kSizes[] = {{1, 1, 1}, {1, 13, 1}, {13, 1, 1}, {5, 3, 1}, {13, 9, 1}, {64, 48, 1}, {96, 33, 1},
                           {4097, 3, 1}, {19, 11, 7}, {6, 10, 64}};

}  // namespace

TEST_CASE_FIXTURE(VulkanFixture, "mips on the GPU match the reference: every format, filter and size") {
    for (Format format : kAllFormats)
        for (MipFilter filter : {MipFilter::blit, MipFilter::box})
            for (Case c : kSizes) check_chain(context, format, filter, c);
}

TEST_CASE_FIXTURE(VulkanFixture, "2048x2048 RGBA8 box: the whole chain equals the reference chain bit for bit") {
    for (MipFilter filter : {MipFilter::box}) {
        CAPTURE(mip_filter_name(filter));
        const ImageF base = random_image(2048, 2048, Format::rgba8_unorm, 42);
        Texture texture = Texture::create(context, TextureDesc::sampled_2d(2048, 2048, Format::rgba8_unorm));
        upload(context, texture, host_pixels(base));
        generate_mips(context, texture, filter);
        const auto reference = reference_mip_chain(base, Format::rgba8_unorm, filter, texture.levels());
        for (uint32_t level = 0; level < texture.levels(); ++level) {
            CAPTURE(level);
            CHECK(mismatches(reference[level], readback_image(context, texture, level), Format::rgba8_unorm,
                             Weights::exact, true) == 0);
        }
    }
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
