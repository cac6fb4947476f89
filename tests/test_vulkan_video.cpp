// VideoTexture: frames compared on the GPU with what the texture holds, only the changed
// rectangles copied and their mips updated; after every frame the texture and its patches
// equal a full upload and regeneration of that frame.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "engine/error.h"
#include "engine/video/video_texture.h"
#include "engine/mips/generate_mips.h"
#include "engine/sampling/patch_layouts.h"
#include "engine/mips/reference_mips.h"
#include "engine/textures/transfer.h"
#include "tests/vulkan_fixture.h"
#include "engine/sampling/vulkan_patch_sampler.h"

namespace tvlm::test {
namespace {

// A static random background with a square moving right and down; frame `cut` and after
// show another background (a scene cut).
struct MovingSquare {
    uint32_t width, height, layers = 1, cut = 8;
    std::vector<uint8_t> frame(uint32_t index) const {
        std::mt19937 random(index >= cut ? 2 : 1);
        std::vector<uint8_t> texels(size_t{width} * height * layers * 4);
        for (uint8_t& v : texels) v = uint8_t(random());
        for (uint32_t layer = 0; layer < layers; ++layer) {
            const uint32_t x0 = 5 + 7 * index + 3 * layer, y0 = 4 + 3 * index;
            for (uint32_t y = y0; y < std::min(height, y0 + 14); ++y)
                for (uint32_t x = x0; x < std::min(width, x0 + 20); ++x)
                    for (uint32_t c = 0; c < 4; ++c)
                        texels[((size_t{layer} * height + y) * width + x) * 4 + c] = uint8_t(40 * c + index);
        }
        return texels;
    }
};

std::vector<uint8_t> layer_of(const std::vector<uint8_t>& frame, uint32_t width, uint32_t height, uint32_t layer) {
    const size_t bytes = size_t{width} * height * 4;
    return {frame.begin() + std::ptrdiff_t(layer * bytes), frame.begin() + std::ptrdiff_t((layer + 1) * bytes)};
}

std::vector<uint8_t> patches(Context& context, VulkanPatchSampler& sampler, Texture& texture) {
    HostBuffer out(context.physical_device(), context.device(), sampler.output().bytes(sampler.layout()),
                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    std::memset(out.data(), 0xff, out.size());  // poison
    context.queue().wait(sampler.sample(texture, out.handle(), 0, out.size()));
    const auto* bytes = reinterpret_cast<const uint8_t*>(out.data());
    return {bytes, bytes + out.size()};
}

void check_video(Context& context, Format format, const MovingSquare& video) {
    CAPTURE(format_info(format).name);
    CAPTURE(video.layers);
    VideoTexture texture(context, video.width, video.height, format, {}, video.layers);
    const TileGrid& grid = texture.grid();
    // The same frames uploaded whole and regenerated: what every update must equal.
    Texture full = Texture::create(context,
                                   TextureDesc::sampled_array(video.width, video.height, video.layers, format));
    std::vector<PatchLayout> per_layer;
    for (uint32_t layer = 0; layer < video.layers; ++layer) {
        FoveatedParams params{.fixations = {{0.3 + 0.2 * layer, 0.4}}, .budget = 40, .patch_size = 8};
        per_layer.push_back(foveated_layout(video.width, video.height, params).layout);
    }
    VulkanPatchSampler sampler(context, batch_layouts(per_layer), {.channels = 4});
    std::vector<uint8_t> held;
    size_t copied_texels = 0, changed_tile_texels = 0;
    for (uint32_t index = 0; index < 12; ++index) {
        CAPTURE(index);
        const std::vector<uint8_t> frame = video.frame(index);
        std::span<std::byte> staging = texture.next_frame();
        REQUIRE(staging.size() == frame.size());
        std::memcpy(staging.data(), frame.data(), frame.size());
        const FrameUpdate update = texture.update();
        CHECK(update.whole_frame == (index == 0 || index == video.cut));
        if (index > 0) {
            CHECK(update.changed_tiles == reference_changed_tiles(held, frame, grid, 0));
            if (!update.whole_frame) {
                copied_texels += size_t(update.copied_fraction * double(frame.size() / 4) + 0.5);
                for (uint32_t layer = 0; layer < grid.layers; ++layer)
                    for (uint32_t ty = 0; ty < grid.tiles_y(); ++ty)
                        for (uint32_t tx = 0; tx < grid.tiles_x(); ++tx)
                            if (update.changed_tiles[(layer * grid.tiles_y() + ty) * grid.tiles_x() + tx])
                                changed_tile_texels += size_t{std::min(32u, video.width - 32 * tx)} *
                                                       std::min(32u, video.height - 32 * ty);
            }
        }
        held = frame;
        for (uint32_t layer = 0; layer < video.layers; ++layer)
            upload(context, full,
                   host_pixels(layer_of(frame, video.width, video.height, layer), video.width, video.height),
                   {.layer = layer});
        generate_mips(context, full, MipFilter::box);
        for (uint32_t layer = 0; layer < video.layers; ++layer)
            for (uint32_t level = 0; level < full.levels(); ++level) {
                CAPTURE(layer);
                CAPTURE(level);
                CHECK(readback(context, texture.texture(), level, layer) == readback(context, full, level, layer));
            }
        CHECK(patches(context, sampler, texture.texture()) == patches(context, sampler, full));
    }
    // The moving square changes a few tiles a frame; rectangles add little to them.
    MESSAGE(format_info(format).name << ", " << video.layers << " layer(s): copied " << copied_texels
                                     << " texels for changed tiles of " << changed_tile_texels);
    CHECK(copied_texels >= changed_tile_texels);
    CHECK(double(copied_texels) <= 1.5 * double(changed_tile_texels));
}

TEST_CASE_FIXTURE(VulkanFixture, "a video texture equals a full upload and regeneration after every frame") {
    check_video(context, Format::rgba8_unorm, {.width = 150, .height = 98});
    check_video(context, Format::rgba8_srgb, {.width = 150, .height = 98});
    check_video(context, Format::rgba8_unorm, {.width = 97, .height = 64, .layers = 2});
}

TEST_CASE_FIXTURE(VulkanFixture, "a change threshold ignores noise up to it and keeps level 0 within it") {
    constexpr uint32_t kWidth = 96, kHeight = 64, kThreshold = 3;
    VideoTexture texture(context, kWidth, kHeight, Format::rgba8_unorm, {.threshold = kThreshold});
    std::mt19937 random(5);
    std::vector<uint8_t> frame(size_t{kWidth} * kHeight * 4);
    for (uint8_t& v : frame) v = uint8_t(100 + random() % 50);
    for (int index = 0; index < 10; ++index) {
        CAPTURE(index);
        if (index > 0)  // drift by one a frame: caught once it passes the threshold
            for (size_t i = 0; i < frame.size(); ++i) frame[i] = uint8_t(frame[i] + (i % 4 == 0 ? 1 : 0));
        std::memcpy(texture.next_frame().data(), frame.data(), frame.size());
        const FrameUpdate update = texture.update();
        CHECK(update.whole_frame == (index == 0 || index % 4 == 0));  // frames 4 and 8 differ by 4
        const std::vector<uint8_t> level0 = readback(context, texture.texture());
        int worst = 0;
        for (size_t i = 0; i < frame.size(); ++i) worst = std::max(worst, std::abs(int{level0[i]} - int{frame[i]}));
        CHECK(worst <= int{kThreshold});
    }
}

TEST_CASE_FIXTURE(VulkanFixture, "video textures refuse what they cannot do, changing nothing") {
    CHECK_THROWS_WITH_AS(VideoTexture(context, 64, 64, Format::rgba16f), doctest::Contains("RGBA8 frames"), Error);
    CHECK_THROWS_WITH_AS(VideoTexture(context, 0, 64), doctest::Contains("0"), Error);
    CHECK_THROWS_WITH_AS(VideoTexture(context, 64, 64, Format::rgba8_unorm, {.threshold = 256}),
                         doctest::Contains("255"), Error);
    CHECK_THROWS_WITH_AS(VideoTexture(context, 64, 64, Format::rgba8_unorm, {.whole_frame_above = 1.5}),
                         doctest::Contains("[0, 1]"), Error);
    VideoTexture texture(context, 64, 64);
    CHECK_THROWS_WITH_AS(texture.update(), doctest::Contains("next_frame()"), Error);
    std::memset(texture.next_frame().data(), 7, texture.frame_bytes());
    CHECK(texture.update().whole_frame);
    CHECK_THROWS_WITH_AS(texture.update(), doctest::Contains("next_frame()"), Error);
    std::memset(texture.next_frame().data(), 7, texture.frame_bytes());
    const FrameUpdate same = texture.update();
    CHECK(!same.whole_frame);
    CHECK(same.tiles_changed == 0);
    CHECK(same.regions.empty());
    CHECK(readback(context, texture.texture())[0] == 7);
}

}  // namespace
}  // namespace tvlm::test
