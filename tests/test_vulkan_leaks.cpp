// Creating and destroying textures (exportable too) and imports thousands of times leaves
// open fds and live device memory objects where they were.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include "device_memory.h"
#include "open_fds.h"
#include "random_image.h"
#include "texture.h"
#include "transfer.h"
#include "vulkan_fixture.h"

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
        TextureDesc desc = TextureDesc::sampled_2d(16 + static_cast<uint32_t>(i % 5), 16, i % 2 ? Format::rgba8_unorm : Format::rgba16f);
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
            Texture imported = Texture::import_memory(context, desc, original.export_memory_fd(), original.allocation_size());
            CHECK(imported.valid());
        }
        CHECK(new_fds(fds_with_original, open_fds()) == "");
        CHECK(DeviceMemory::live_count() == with_original);
    }
}
