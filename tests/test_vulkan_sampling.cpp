// The Vulkan compute sampler against the CPU reference (lavapipe in CI), every layout and
// format, outputs poisoned first; and its refusals.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>

#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "engine/sampling/patch_layouts.h"
#include "tests/random_image.h"
#include "engine/sampling/reference_sampling.h"
#include "tests/sampling_check.h"
#include "engine/textures/texture.h"
#include "engine/textures/transfer.h"
#include "tests/vulkan_fixture.h"
#include "engine/sampling/vulkan_patch_sampler.h"
#include "engine/sampling/vulkan_point_sampler.h"

using namespace tvlm;

namespace {

struct Images {
    Texture texture;
    std::vector<MipLevels> levels;  // per layer, as the GPU stores them
};

Images make_images(Context& context, const std::vector<ImageF>& layers, Format format) {
    Images images;
    images.texture = Texture::create(context, {layers[0].width, layers[0].height, uint32_t(layers.size()), 0, format});
    for (uint32_t l = 0; l < layers.size(); ++l) upload(context, images.texture, host_pixels(layers[l]), {.layer = l});
    generate_mips(context, images.texture, MipFilter::box);
    for (uint32_t l = 0; l < layers.size(); ++l) {
        MipLevels levels;
        for (uint32_t m = 0; m < images.texture.levels(); ++m)
            levels.push_back(readback_image(context, images.texture, m, l));
        images.levels.push_back(std::move(levels));
    }
    return images;
}

// Samples on the GPU into a poisoned host-visible buffer and compares with the reference.
void check_sampling(Context& context, Images& images, const PatchLayout& layout, PatchOutput output) {
    const Format format = images.texture.desc().format;
    CAPTURE(format_info(format).name);
    CAPTURE(layout.kind);
    CAPTURE(output.half);
    CAPTURE(output.channels);
    VulkanPatchSampler sampler(context, layout, output);
    HostBuffer out(context.physical_device(), context.device(), output.bytes(layout),
                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    std::memset(out.data(), 0xff, out.size());  // NaN in float32 and float16
    context.queue().wait(sampler.sample(images.texture, out.handle(), 0, out.size()));
    const std::vector<float> actual = test::output_values(out.data(), layout.output_values(output.channels),
                                                          output.half);
    const std::vector<float> expected = reference_sample_patches(layout, images.levels, format, output.channels,
                                                                 sampler.max_anisotropy());
    CHECK(test::sample_mismatches(expected, actual, layout.mode == SamplingMode::gradients, output.half) == 0);
}

}  // namespace

TEST_CASE_FIXTURE(test::VulkanFixture, "vulkan sampling: every layout and format matches the reference") {
    const uint32_t w = 96, h = 80;
    FoveatedParams fovea;
    fovea.fixations = {{0.3, 0.6}};
    fovea.budget = 40;
    fovea.patch_size = 8;
    const std::vector<PatchLayout> layouts = {
        level_grid_layout(w, h, 8, 0),
        level_grid_layout(w, h, 4, 2),
        foveated_layout(w, h, fovea).layout,
        level_grid_layout(w, h, 7, 1),
        level_grid_layout(w, h, 5, 0),                                              // P * P and P not powers of two
        anisotropic_layout(w, h, {.patch_size = 8, .level = 1, .elongation = 1})};  // gradients, isotropic
    for (Format format : kAllFormats) {
        Images images = make_images(context, {test::random_image(w, h, format, 11)}, format);
        for (const PatchLayout& layout : layouts) check_sampling(context, images, layout, {.channels = 4});
        if (context.half_storage()) check_sampling(context, images, layouts[2], {.channels = 3, .half = true});
    }
}

TEST_CASE_FIXTURE(test::VulkanFixture, "vulkan sampling: anisotropic footprints along constant rows") {
    // Where the taps along the axis go is implementation-defined; along constant rows it
    // does not matter, so the level choice and the filtering across the axis are checked.
    for (Format format : {Format::rgba8_unorm, Format::rgba16f}) {
        Images images = make_images(context, {test::rows_constant_image(128, 64, format, 5)}, format);
        for (uint32_t elongation : {2u, 4u, 8u})
            check_sampling(context, images,
                           anisotropic_layout(128, 64, {.patch_size = 4, .level = 1, .elongation = elongation}),
                           {.channels = 4});
    }
}

TEST_CASE_FIXTURE(test::VulkanFixture, "vulkan sampling: a batch of layers with one fixation each, one dispatch") {
    std::vector<ImageF> layers;
    std::vector<PatchLayout> per_image;
    for (uint32_t b = 0; b < 3; ++b) {
        layers.push_back(test::random_image(64, 48, Format::rgba8_unorm, 20 + b));
        FoveatedParams p;
        p.fixations = {{0.2 + 0.3 * b, 1.0 - 0.4 * b}};
        p.budget = 20 + 3 * b;
        p.patch_size = 8;
        per_image.push_back(foveated_layout(64, 48, p).layout);
    }
    Images images = make_images(context, layers, Format::rgba8_unorm);
    const PatchLayout batch = batch_layouts(per_image);
    REQUIRE(batch.images == 3);
    check_sampling(context, images, batch, {.channels = 3});
}

TEST_CASE_FIXTURE(test::VulkanFixture, "vulkan sampling: bad input is refused and nothing is written") {
    Images images = make_images(context, {test::random_image(64, 48, Format::rgba8_unorm, 1)}, Format::rgba8_unorm);
    const PatchLayout layout = level_grid_layout(64, 48, 8, 1);
    VulkanPatchSampler sampler(context, layout, {.channels = 4});
    HostBuffer out(context.physical_device(), context.device(), sampler.output().bytes(layout) + 4,
                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    std::memset(out.data(), 0x5a, out.size());
    CHECK_THROWS_WITH_AS(sampler.sample(images.texture, out.handle(), 0, out.size()),
                         doctest::Contains("but [B, N, C, P, P] = [1, 12, 4, 8, 8] needs 12288"), Error);
    // Too few levels.
    Texture one_level = Texture::create(context, TextureDesc::sampled_2d(64, 48, Format::rgba8_unorm, 1));
    CHECK_THROWS_WITH_AS(sampler.sample(one_level, out.handle(), 0, out.size() - 4),
                         doctest::Contains("samples 2 mip levels but the texture has 1"), Error);
    // Wrong size, too few layers.
    Texture small = Texture::create(context, TextureDesc::sampled_2d(32, 48, Format::rgba8_unorm));
    CHECK_THROWS_WITH_AS(sampler.sample(small, out.handle(), 0, out.size() - 4),
                         doctest::Contains("the layout is for 64x48 images but the texture is 32x48"), Error);
    VulkanPatchSampler two(context, batch_layouts(std::vector<PatchLayout>{layout, layout}), {.channels = 4});
    CHECK_THROWS_WITH_AS(two.sample(images.texture, out.handle(), 0, 2 * (out.size() - 4)),
                         doctest::Contains("2 images but the texture has 1 layers"), Error);
    CHECK_THROWS_WITH_AS(VulkanPatchSampler(context, layout, {.channels = 2}), doctest::Contains("3 or 4 channels"),
                         Error);
    PatchLayout huge = layout;  // one patch of 65536^2 samples: 2^32, past the shader's 32-bit index
    huge.patches.resize(1);
    huge.patch_size = 65536;
    CHECK_THROWS_WITH_AS(VulkanPatchSampler(context, huge, {.channels = 4}), doctest::Contains("too many samples"),
                         Error);
    for (size_t i = 0; i < out.size(); ++i) REQUIRE(static_cast<uint8_t>(out.data()[i]) == 0x5a);
}

TEST_CASE_FIXTURE(test::VulkanFixture,
                  "vulkan point samples at per-sample LOD (the benchmark's job) match the reference") {
    constexpr uint32_t kCount = 3000;  // not a multiple of the workgroup
    VulkanPointSampler sampler(context);
    HostBuffer out(context.physical_device(), context.device(), 16 * kCount, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    for (Format format : {Format::rgba8_unorm, Format::rgba16f}) {
        CAPTURE(format_info(format).name);
        Images images = make_images(context, {test::random_image(256, 192, format, 3)}, format);
        for (uint32_t tiles : {0u, 1u}) {
            CAPTURE(tiles);
            const gpu::PointSampleParams points{kCount, float(images.texture.levels() - 1), 11u, tiles, 1.0f / 256};
            std::memset(out.data(), 0xff, out.size());  // NaN
            context.queue().wait(sampler.sample(images.texture, points, out.handle(), 0, out.size()));
            std::vector<float> expected;
            for (uint32_t i = 0; i < kCount; ++i) {
                const gpu::PointSample q = gpu::point_sample(points, i);
                for (double c : reference_trilinear(images.levels[0], format, q.u, q.v, q.lod))
                    expected.push_back(float(c));
            }
            const std::vector<float> actual = test::output_values(out.data(), 4 * size_t{kCount}, false);
            CHECK(test::sample_mismatches(expected, actual, false, false) == 0);
        }
    }
}

TEST_CASE_FIXTURE(test::VulkanFixture, "vulkan point samples: bad input is refused and nothing is written") {
    Images images = make_images(context, {test::random_image(64, 48, Format::rgba8_unorm, 1)}, Format::rgba8_unorm);
    VulkanPointSampler sampler(context);
    HostBuffer out(context.physical_device(), context.device(), 16 * 100, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    std::memset(out.data(), 0x5a, out.size());
    const gpu::PointSampleParams good{100, 2.0f, 1u, 0u, 1.0f / 64};
    const auto refused = [&](gpu::PointSampleParams points, Texture& texture, VkDeviceSize bytes, const char* why) {
        CHECK_THROWS_WITH_AS(sampler.sample(texture, points, out.handle(), 0, bytes), doctest::Contains(why), Error);
    };
    gpu::PointSampleParams none = good;
    none.count = 0;
    refused(none, images.texture, 0, "no samples asked for");
    refused(good, images.texture, out.size() - 16, "100 samples need 1600");
    for (float lod : {std::numeric_limits<float>::quiet_NaN(), -1.0f, 6.5f}) {
        gpu::PointSampleParams bad = good;
        bad.max_lod = lod;
        refused(bad, images.texture, out.size(), "outside the texture's levels [0, 6]");
    }
    Texture one_level = Texture::create(context, TextureDesc::sampled_2d(64, 48, Format::rgba8_unorm, 1));
    refused(good, one_level, out.size(), "outside the texture's levels [0, 0]");
    for (size_t i = 0; i < out.size(); ++i) REQUIRE(static_cast<uint8_t>(out.data()[i]) == 0x5a);
}
