// The CPU reference sampler against facts that follow from its definition.
#include <doctest/doctest.h>

#include "engine/error.h"
#include "engine/sampling/patch_layouts.h"
#include "tests/random_image.h"
#include "engine/mips/reference_mips.h"
#include "engine/sampling/reference_sampling.h"
#include "engine/textures/color.h"

using namespace tvlm;

TEST_CASE("reference: a level grid reads each texel of its level exactly") {
    const ImageF base = test::random_image(37, 23, Format::rgba8_unorm, 7);
    const MipLevels levels = reference_mip_chain(base, Format::rgba8_unorm, MipFilter::box,
                                                 full_mip_count(base.width, base.height));
    for (uint32_t level : {0u, 1u, 2u}) {
        const PatchLayout layout = level_grid_layout(37, 23, 4, level);
        const std::vector<float> out = reference_sample_patches(layout, std::span(&levels, 1), Format::rgba8_unorm, 4);
        const ImageF& l = levels[level];
        const uint32_t cols = (l.width + 3) / 4;
        for (size_t n = 0; n < layout.patches.size(); ++n)
            for (uint32_t k = 0; k < 4; ++k)
                for (uint32_t j = 0; j < 4; ++j) {
                    const uint32_t x = std::min(uint32_t(n % cols) * 4 + j, l.width - 1);  // clamp past the edge
                    const uint32_t y = std::min(uint32_t(n / cols) * 4 + k, l.height - 1);
                    for (uint32_t c = 0; c < 4; ++c)
                        REQUIRE(out[((n * 4 + c) * 4 + k) * 4 + j] == doctest::Approx(l.at(x, y, c)).epsilon(1e-6));
                }
    }
}

TEST_CASE("reference: trilinear blends two levels, sRGB in linear light, r32f as (r, 0, 0, 1)") {
    const ImageF base = test::random_image(16, 16, Format::rgba8_srgb, 3);
    const MipLevels levels = reference_mip_chain(base, Format::rgba8_srgb, MipFilter::box, 5);
    const auto lo = reference_trilinear(levels, Format::rgba8_srgb, 0.3, 0.6, 1.0);
    const auto hi = reference_trilinear(levels, Format::rgba8_srgb, 0.3, 0.6, 2.0);
    const auto mid = reference_trilinear(levels, Format::rgba8_srgb, 0.3, 0.6, 1.25);
    for (size_t c = 0; c < 4; ++c) CHECK(mid[c] == doctest::Approx(0.75 * lo[c] + 0.25 * hi[c]));
    // Texel centre of level 0: the decoded texel itself.
    const auto t = reference_trilinear(levels, Format::rgba8_srgb, 2.5 / 16, 3.5 / 16, -1.0);
    CHECK(t[0] == doctest::Approx(srgb_to_linear(base.at(2, 3, 0))));
    CHECK(t[3] == doctest::Approx(base.at(2, 3, 3)));
    const ImageF grey = test::random_image(8, 8, Format::r32f, 4);
    const MipLevels g = reference_mip_chain(grey, Format::r32f, MipFilter::box, 4);
    const auto r = reference_trilinear(g, Format::r32f, 0.5 / 8, 0.5 / 8, 0.0);
    CHECK(r[0] == doctest::Approx(grey.at(0, 0, 0)));
    CHECK(r[1] == 0.0);
    CHECK(r[3] == 1.0);
}

TEST_CASE("reference: anisotropic taps along a constant direction equal one trilinear sample") {
    // Rows are constant: taps along u cannot change the result, only the LOD and v matter.
    const ImageF base = test::rows_constant_image(256, 128, Format::rgba32f, 5);
    const MipLevels levels = reference_mip_chain(base, Format::rgba32f, MipFilter::box, 9);
    PatchLayout aniso = anisotropic_layout(256, 128, {.patch_size = 8, .level = 1, .elongation = 4});
    const std::vector<float> a = reference_sample_patches(aniso, std::span(&levels, 1), Format::rgba32f, 3);
    aniso.mode = SamplingMode::level;  // same positions, LOD given: the patch's recorded level
    const std::vector<float> b = reference_sample_patches(aniso, std::span(&levels, 1), Format::rgba32f, 3);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) REQUIRE(a[i] == doctest::Approx(b[i]).epsilon(1e-9));
}

TEST_CASE("reference: anisotropic taps average every channel, alpha included") {
    // A uniform texture: every tap, and so every sample, is the texel itself.
    ImageF base(64, 32, 4);
    for (size_t i = 0; i < base.texels.size(); ++i) base.texels[i] = 0.2f * float(i % 4 + 1);
    const MipLevels levels = reference_mip_chain(base, Format::rgba32f, MipFilter::box, 7);
    const PatchLayout aniso = anisotropic_layout(64, 32, {.patch_size = 4, .level = 1, .elongation = 4});
    const std::vector<float> out = reference_sample_patches(aniso, std::span(&levels, 1), Format::rgba32f, 4);
    REQUIRE(out.size() == aniso.patches.size() * 4 * 4 * 4);
    for (size_t i = 0; i < out.size(); ++i) REQUIRE(out[i] == doctest::Approx(0.2 * double(i / 16 % 4 + 1)));
}

TEST_CASE("reference: padding slots are zeros; missing levels are refused") {
    const ImageF base = test::random_image(32, 32, Format::rgba8_unorm, 9);
    const MipLevels levels = reference_mip_chain(base, Format::rgba8_unorm, MipFilter::box,
                                                 full_mip_count(base.width, base.height));
    FoveatedParams p;
    p.budget = 4;
    const PatchLayout one = foveated_layout(32, 32, p).layout;
    p.budget = 7;
    const PatchLayout batch = batch_layouts(std::vector<PatchLayout>{foveated_layout(32, 32, p).layout, one});
    const std::vector<MipLevels> images{levels, levels};
    const std::vector<float> out = reference_sample_patches(batch, images, Format::rgba8_unorm, 4);
    const size_t per_patch = 4 * 16 * 16;
    for (size_t i = (batch.patches_per_image + one.patches.size()) * per_patch; i < out.size(); ++i)
        REQUIRE(out[i] == 0.0f);
    const MipLevels two(levels.begin(), levels.begin() + 1);
    const PatchLayout grid = level_grid_layout(32, 32, 4, 2);
    CHECK_THROWS_WITH_AS(reference_sample_patches(grid, std::span(&two, 1), Format::rgba8_unorm, 4),
                         doctest::Contains("needs 3 mip levels"), Error);
}
