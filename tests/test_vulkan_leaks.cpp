// Creating and destroying textures (exportable too), imports and video textures fed frames
// thousands of times leaves open fds and live device memory objects where they were.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "engine/core/context.h"
#include "engine/core/device_memory.h"
#include "engine/mips/generate_mips.h"
#include "tests/host_renderer.h"
#include "engine/core/instance.h"
#include "tests/open_fds.h"
#include "tests/random_image.h"
#include "engine/textures/texture.h"
#include "engine/textures/transfer.h"
#include "engine/video/video_texture.h"
#include "tests/vulkan_fixture.h"

using namespace tvlm;
using namespace tvlm::test;


TEST_CASE_FIXTURE(VulkanFixture, "2000 textures and 1000 export/import cycles leak no fds or memory") {
    const ImageF pixels = random_image(16, 16, Format::rgba8_unorm, 9);
    {  // warm up: pipelines, staging, lazily created driver state, one export/import
        TextureDesc desc = TextureDesc::sampled_2d(16, 16, Format::rgba8_unorm);
        desc.exportable = context.memory_export();
        Texture t = Texture::create(context, desc);
        upload(context, t, host_pixels(pixels));
        if (desc.exportable) Texture::import_memory(context, desc, t.export_memory_fd(), t.allocation_size());
        context.queue().wait_all();
    }
    const std::set<std::string> fds = open_fds();
    const int64_t memory = DeviceMemory::live_count();
    for (int i = 0; i < 2000; ++i) {
        TextureDesc desc = TextureDesc::sampled_2d(16 + static_cast<uint32_t>(i % 5), 16,
                                                   i % 2 ? Format::rgba8_unorm : Format::rgba16f);
        desc.exportable = i % 3 == 0 && context.memory_export();
        Texture t = Texture::create(context, desc);
        if (i % 10 == 0) upload(context, t, host_pixels(pixels));
        if (i % 100 == 0) context.queue().wait_all();
    }
    context.queue().wait_all();
    CHECK(new_fds(fds, open_fds()) == "");
    CHECK(DeviceMemory::live_count() == memory);
    if (context.memory_export()) {
        TextureDesc desc = TextureDesc::sampled_2d(16, 16, Format::rgba8_unorm);
        desc.exportable = true;
        Texture original = Texture::create(context, desc);
        const int64_t with_original = DeviceMemory::live_count();
        const std::set<std::string> fds_with_original = open_fds();  // lavapipe keeps a memfd per export
        for (int i = 0; i < 1000; ++i) {
            Texture imported = Texture::import_memory(context, desc, original.export_memory_fd(),
                                                      original.allocation_size());
            CHECK(imported.valid());
        }
        CHECK(new_fds(fds_with_original, open_fds()) == "");
        CHECK(DeviceMemory::live_count() == with_original);
    }
}

TEST_CASE("a context with validation outlives later instances and contexts without it") {
    // volk keeps one set of global function pointers, loaded from the instance made last;
    // an instance without debug utils has no vkDestroyDebugUtilsMessengerEXT (NULL), so the
    // first context must destroy its messenger through its own instance (a crash on NVIDIA).
    auto validated = std::make_unique<Context>(ContextDesc{{}, true});
    { const Instance plain(false); }
    const Context plain_context(ContextDesc{{}, false});
    Texture texture = Texture::create(*validated, TextureDesc::sampled_2d(8, 8, Format::rgba8_unorm));
    validated->queue().wait(generate_mips(*validated, texture, MipFilter::box));
    texture = Texture();
    CHECK(validated->validation_log().count() == 0);
    validated.reset();
    CHECK(plain_context.device() != VK_NULL_HANDLE);
}

TEST_CASE("300 adopted contexts and 1000 wrapped application images leak no fds or memory") {
    HostRenderer host(true);
    OwnImage image(host, 32, 32,
                   VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                       VK_IMAGE_USAGE_TRANSFER_DST_BIT);
    const ImageF pixels = random_image(32, 32, Format::rgba32f, 4);
    const auto cycle = [&](bool work) {
        Context context(host.objects());
        if (!work) return;
        Texture t = Texture::wrap(context, image.described());
        upload(context, t, host_pixels(pixels));
        generate_mips(context, t, MipFilter::box);
        context.queue().wait_all();
    };
    cycle(true);  // warm up: driver state made on first use
    const std::set<std::string> fds = open_fds();
    const int64_t memory = DeviceMemory::live_count();
    for (int i = 0; i < 300; ++i) cycle(i % 10 == 0);
    CHECK(new_fds(fds, open_fds()) == "");
    CHECK(DeviceMemory::live_count() == memory);
    {
        Context context(host.objects());
        {  // warm up this context: its pipelines and the driver state they make on first use
            Texture t = Texture::wrap(context, image.described());
            generate_mips(context, t, MipFilter::box);
            context.queue().wait_all();
        }
        const std::set<std::string> with_context = open_fds();
        for (int i = 0; i < 1000; ++i) {
            Texture t = Texture::wrap(context, image.described());
            if (i % 100 == 0) generate_mips(context, t, MipFilter::box);
        }
        context.queue().wait_all();
        CHECK(new_fds(with_context, open_fds()) == "");
    }
    CHECK(vkDeviceWaitIdle(host.device()) == VK_SUCCESS);
    CHECK(host.log().messages().empty());
}

// A video texture fed a first (whole) frame and a partly changed one, then destroyed.
void video_texture_cycle(Context& context, uint32_t width, uint32_t height, uint8_t value) {
    VideoTexture video(context, width, height);
    for (int frame = 0; frame < 2; ++frame) {
        std::span<std::byte> texels = video.next_frame();
        std::fill(texels.begin(), texels.end(), std::byte{value});
        if (frame == 1) std::fill(texels.begin(), texels.begin() + width * 4 * 3, std::byte(value + 1));
        const FrameUpdate update = video.update();
        CHECK(update.whole_frame == (frame == 0));
    }
}

TEST_CASE_FIXTURE(VulkanFixture, "1000 video textures fed frames leak no fds or memory") {
    video_texture_cycle(context, 64, 48, 1);  // warm up: pipelines, lazily created driver state
    context.queue().wait_all();
    const std::set<std::string> fds = open_fds();
    const int64_t memory = DeviceMemory::live_count();
    for (int i = 0; i < 1000; ++i) video_texture_cycle(context, 64 + uint32_t(i % 3), 48, uint8_t(i));
    context.queue().wait_all();
    CHECK(new_fds(fds, open_fds()) == "");
    CHECK(DeviceMemory::live_count() == memory);
}
