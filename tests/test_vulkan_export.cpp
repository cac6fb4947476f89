// Exportable textures: memory exported as an opaque fd and imported as a second image.
#include <doctest/doctest.h>

#include "engine/mips/generate_mips.h"
#include "tests/random_image.h"
#include "engine/textures/texture.h"
#include "engine/textures/transfer.h"
#include "engine/error.h"
#include "tests/vulkan_fixture.h"

using namespace tvlm;
using namespace tvlm::test;

TEST_CASE_FIXTURE(VulkanFixture, "exported memory imported as a second image reads the same content") {
    if (!context.memory_export()) {
        MESSAGE("device has no VK_KHR_external_memory_fd: export test cannot run");
        REQUIRE(context.memory_export());  // lavapipe has it: this must not be skipped in CI
    }
    for (Format format : kAllFormats) {
        CAPTURE(format_info(format).name);
        TextureDesc desc = TextureDesc::sampled_array(37, 20, 3, format);
        desc.exportable = true;
        Texture original = Texture::create(context, desc);
        for (uint32_t layer = 0; layer < 3; ++layer)
            upload(context, original, host_pixels(random_image(37, 20, format, layer + 7)), {.layer = layer});
        context.queue().wait(generate_mips(context, original, MipFilter::box));

        CHECK(Texture::required_memory(context, desc) == original.allocation_size());
        UniqueFd fd = original.export_memory_fd();
        REQUIRE(fd.valid());
        Texture imported = Texture::import_memory(context, desc, std::move(fd), original.allocation_size());
        CHECK_FALSE(fd.valid());  // the import took the fd
        for (uint32_t layer = 0; layer < 3; ++layer)
            for (uint32_t level = 0; level < original.levels(); ++level) {
                CAPTURE(layer);
                CAPTURE(level);
                REQUIRE(readback(context, imported, level, layer) == readback(context, original, level, layer));
            }
    }
}

TEST_CASE_FIXTURE(VulkanFixture, "export and import refuse what cannot work") {
    Texture plain = Texture::create(context, TextureDesc::sampled_2d(8, 8, Format::rgba8_unorm));
    CHECK_THROWS_WITH_AS(plain.export_memory_fd(), doctest::Contains("not created exportable"), Error);
    CHECK_THROWS_WITH_AS(
        Texture::import_memory(context, TextureDesc::sampled_2d(8, 8, Format::rgba8_unorm), UniqueFd(), 4096),
        doctest::Contains("fd is not valid"), Error);
    // Memory too small for the texture described.
    TextureDesc small = TextureDesc::sampled_2d(8, 8, Format::rgba8_unorm, 1);
    small.exportable = true;
    Texture donor = Texture::create(context, small);
    TextureDesc big = TextureDesc::sampled_2d(512, 512, Format::rgba32f);
    CHECK_THROWS_WITH_AS(Texture::import_memory(context, big, donor.export_memory_fd(), donor.allocation_size()),
                         doctest::Contains("smaller than"), Error);
}

TEST_CASE_FIXTURE(VulkanFixture, "semaphore export is refused with a reason where unsupported") {
    if (context.semaphore_export()) {
        UniqueFd fd = context.queue().timeline().export_fd();
        CHECK(fd.valid());
    } else {
        CHECK_THROWS_WITH_AS(context.queue().timeline().export_fd(), doctest::Contains("VK_KHR_external_semaphore_fd"),
                             Error);
    }
}
