// The overlay renderer (Vulkan compute, binned into tiles) against the CPU reference on
// random scenes: boxes across the frame's edges, zero-size and huge boxes, strokes wider
// than their boxes, lines with both caps, zero-length ones, curves with coincident
// endpoints, points, labels; RGBA8 and sRGB frames; thousands of translucent shapes over one tile,
// whose order matters. Every byte within one 8-bit step of the reference; pixels no shape
// covers keep their bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "engine/error.h"
#include "engine/textures/half.h"
#include "engine/textures/image.h"
#include "engine/overlay/overlay_reference.h"
#include "engine/overlay/overlay_renderer.h"
#include "engine/overlay/overlay_scene.h"
#include "tests/random_overlay_scene.h"
#include "engine/textures/transfer.h"
#include "tests/vulkan_fixture.h"

using namespace tvlm;
using namespace tvlm::test;

namespace {

// Draws `scene` on the GPU and on the CPU over the same frame; returns the largest byte
// difference and counts the bytes the overlay changed.
int draw_both(Context& context, OverlayRenderer& renderer, const OverlayScene& scene, uint32_t w, uint32_t h,
              Format format, std::mt19937& random, size_t* changed = nullptr) {
    const std::vector<uint8_t> before = random_frame(w, h, random);
    Texture texture = Texture::create(context, TextureDesc::sampled_2d(w, h, format, 1));
    upload(context, texture, host_pixels(before, w, h));
    const std::vector<gpu::OverlayShape> shapes = overlay_shapes(scene, w, h);
    context.queue().wait(renderer.draw(texture, shapes));
    const std::vector<uint8_t> gpu = readback(context, texture);
    const OverlayComparison c = test::compare_with_reference(before, gpu, shapes, w, h, format == Format::rgba8_srgb);
    if (changed) *changed = c.changed;
    return c.worst;
}

}  // namespace

TEST_CASE_FIXTURE(VulkanFixture, "overlays of random scenes equal the CPU reference within one step") {
    OverlayRenderer renderer(context);
    std::mt19937 random(21);
    for (Format format : {Format::rgba8_unorm, Format::rgba8_srgb})
        for (int scene = 0; scene < 3; ++scene) {
            CAPTURE(format_info(format).name);
            CAPTURE(scene);
            size_t changed = 0;
            CHECK(draw_both(context, renderer, random_scene(203, 131, random, true), 203, 131, format, random,
                            &changed) <= 1);
            CHECK(changed > 1000);  // the scene drew (the test can fail)
        }
}

TEST_CASE_FIXTURE(VulkanFixture, "overlays on RGBA16F frames equal the CPU reference within one 8-bit step") {
    OverlayRenderer renderer(context);
    std::mt19937 random(33);
    constexpr uint32_t w = 203, h = 131;
    const std::vector<uint16_t> before = random_frame_f16(w, h, random);
    Texture texture = Texture::create(context, TextureDesc::sampled_2d(w, h, Format::rgba16f, 1));
    upload(context, texture, HostPixels{before.data(), ComponentType::f16, w, h, 4});
    const std::vector<gpu::OverlayShape> shapes = overlay_shapes(random_scene(w, h, random, true), w, h);
    context.queue().wait(renderer.draw(texture, shapes));
    const std::vector<uint8_t> drawn = readback(context, texture);
    REQUIRE(drawn.size() == before.size() * 2);
    std::vector<uint16_t> gpu(before.size());
    std::memcpy(gpu.data(), drawn.data(), drawn.size());
    const OverlayComparison c = compare_with_reference_f16(before, gpu, shapes, w, h);
    CHECK(c.worst <= 1);
    CHECK(c.changed > 1000);
}

TEST_CASE_FIXTURE(VulkanFixture, "thousands of translucent shapes over one tile composite in scene order") {
    OverlayRenderer renderer(context);
    std::mt19937 random(5);
    std::uniform_real_distribution<float> at(2.0f, 14.0f);
    for (int count : {300, 3000}) {  // sorted in shared memory; past TVLM_OVERLAY_SORTED, walked in order
        CAPTURE(count);
        OverlayScene scene;
        for (int i = 0; i < count; ++i)
            scene.boxes.push_back(
                {at(random), at(random), 6, 6, 1, 1, random_color(random, true), random_color(random, true)});
        CHECK(draw_both(context, renderer, scene, 40, 24, Format::rgba8_unorm, random) <= 1);
    }
}

TEST_CASE_FIXTURE(VulkanFixture, "overlays refuse bad scenes and frames, drawing nothing") {
    OverlayRenderer renderer(context);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH_AS(overlay_shapes({.boxes = {{nan, 1, 2, 2}}}, 8, 8), doctest::Contains("NaN or infinite"),
                         Error);
    CHECK_THROWS_WITH_AS(overlay_shapes({.points = {{1, inf, 2}}}, 8, 8), doctest::Contains("point 0"), Error);
    CHECK_THROWS_WITH_AS(overlay_shapes({.boxes = {{1, 1, -2, 2}}}, 8, 8), doctest::Contains("negative width"), Error);
    CHECK_THROWS_WITH_AS(overlay_shapes({.lines = {{0, 0, 1, 1, -1}}}, 8, 8), doctest::Contains("negative width"),
                         Error);
    CHECK_THROWS_WITH_AS(overlay_shapes({}, 0, 8), doctest::Contains("at least 1x1"), Error);
    CHECK_THROWS_WITH_AS(overlay_shapes({.trails = {{{1, 2, 3}}}}, 8, 8), doctest::Contains("odd number"), Error);
    CHECK_THROWS_WITH_AS(overlay_shapes({.labels = {{1, 2, -3, "x"}}}, 8, 8), doctest::Contains("negative size"),
                         Error);
    CHECK(overlay_shapes({.boxes = {{-100, -100, 10, 10}}}, 8, 8).empty());  // off the frame: nothing to draw
    // An empty scene leaves the frame as it was.
    std::mt19937 random(1);
    size_t changed = 1;
    CHECK(draw_both(context, renderer, {}, 20, 20, Format::rgba8_unorm, random, &changed) == 0);
    CHECK(changed == 0);
    Texture f32 = Texture::create(context, TextureDesc::sampled_2d(8, 8, Format::rgba32f, 1));
    const std::vector<gpu::OverlayShape> shapes = overlay_shapes({.points = {{4, 4, 2}}}, 8, 8);
    CHECK_THROWS_WITH_AS(renderer.draw(f32, shapes), doctest::Contains("RGBA8 (UNORM or sRGB) and RGBA16F"), Error);
    Texture small = Texture::create(context, TextureDesc::sampled_2d(4, 4, Format::rgba8_unorm, 1));
    CHECK_THROWS_WITH_AS(renderer.draw(small, shapes), doctest::Contains("outside the 4x4 frame"), Error);
}
