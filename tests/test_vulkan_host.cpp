// A Context that adopts an application's Vulkan instance, device and queue
// (engine/core/host_vulkan.h): the work done on the host's device matches the reference, the
// context destroys nothing of the host's, a device without what texturevlm needs is refused
// with every missing item named, and an adopted context works beside a self-created one.
// The "host" here is raw Vulkan with its own validation messenger: any message fails.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "engine/core/host_buffer.h"
#include "tests/host_renderer.h"
#include "engine/sampling/patch_layouts.h"
#include "tests/random_image.h"
#include "engine/mips/reference_mips.h"
#include "engine/sampling/reference_sampling.h"
#include "tests/sampling_check.h"
#include "engine/textures/texture.h"
#include "tests/texture_compare.h"
#include "engine/textures/transfer.h"
#include "tests/vulkan_fixture.h"
#include "tests/vulkan_half_chain.h"
#include "engine/sampling/vulkan_patch_sampler.h"

using namespace tvlm;
using namespace tvlm::test;

namespace {

// A box chain on `context`'s device, level 2 against the reference.
double chain_difference(Context& context) {
    ImageF base(29, 18, 4);
    for (size_t i = 0; i < base.texels.size(); ++i) base.texels[i] = float((i * 7919) % 1000) / 1000.0f;
    Texture texture = Texture::create(context, TextureDesc::sampled_2d(29, 18, Format::rgba32f));
    upload(context, texture, host_pixels(base));
    generate_mips(context, texture, MipFilter::box);
    const ImageF got = readback_image(context, texture, 2);
    return largest_difference(reference_mip_chain(base, Format::rgba32f, MipFilter::box, 3)[2], got);
}

constexpr VkImageUsageFlags kAllUsage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT |
                                        VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;

}  // namespace

TEST_CASE("A context adopts the application's device and queue, works there and destroys nothing of it") {
    HostRenderer host(true);
    {
        Context context(host.objects());
        CHECK(context.device() == host.device());
        CHECK_FALSE(context.validation());  // the application's messenger reports, not ours
        CHECK(chain_difference(context) <= 1e-6);
    }
    // The device and its queue are still the application's to use.
    CHECK(vkDeviceWaitIdle(host.device()) == VK_SUCCESS);
    {
        Context again(host.objects());  // and can be adopted again
        CHECK(chain_difference(again) <= 1e-6);
    }
    for (const std::string& m : host.log().messages()) FAIL_CHECK(m);
    CHECK(host.log().messages().empty());
}

TEST_CASE("An adopted context works beside a self-created one") {
    HostRenderer host(true);
    Context adopted(host.objects());
    Context& own = test::shared_context();
    CHECK(chain_difference(adopted) <= 1e-6);
    CHECK(chain_difference(own) <= 1e-6);
    CHECK(chain_difference(adopted) <= 1e-6);
    CHECK(host.log().messages().empty());
}

TEST_CASE("A device without full subgroups gets the general box shader: the same bits") {
    HostRenderer host(true, {}, {.full_subgroups = false});
    Context context(host.objects());
    CHECK_FALSE(context.subgroup_shuffles());
    for (Format format : {Format::rgba8_unorm, Format::rgba8_srgb, Format::rgba16f}) {
        CAPTURE(format_info(format).name);
        const ImageF base = random_image(192, 128, format, 5);
        Texture texture = Texture::create(context, TextureDesc::sampled_2d(192, 128, format));
        REQUIRE(texture.words_allowed());  // only the device keeps it off the word shaders
        upload(context, texture, host_pixels(base));
        generate_mips(context, texture, MipFilter::box);
        const auto reference = reference_mip_chain(base, format, MipFilter::box, texture.levels());
        for (uint32_t level = 1; level < texture.levels(); ++level) {
            CAPTURE(level);
            CHECK(box_mismatches(reference[level], readback_image(context, texture, level), format) == 0);
        }
    }
    check_special_half_chain(context, 96, 64, 3);  // float16 special values through the general shader
    for (const std::string& m : host.log().messages()) FAIL_CHECK(m);
}

// The packed RGBA16F shader that rounds to binary16 in integer steps and tests bits for
// infinities, for devices without IEEE float16 in shaders (lavapipe and NVIDIA's driver
// take the one that converts: test_vulkan_mips).
TEST_CASE("A device without shaderFloat16 rounds float16 box chains in integer steps: the same bits") {
    HostRenderer host(true, {}, {.float16 = false});
    Context context(host.objects());
    REQUIRE(context.subgroup_shuffles());
    CHECK_FALSE(context.ieee_float16());
    for (Extent2D size : {Extent2D{256, 128}, Extent2D{96, 64}})
        check_special_half_chain(context, size.width, size.height, 11);
    for (const std::string& m : host.log().messages()) FAIL_CHECK(m);
}

TEST_CASE("A device without what texturevlm needs is refused, every missing item named") {
    HostRenderer host(false);
    try {
        Context context(host.objects());
        FAIL("the context was made");
    } catch (const Error& e) {
        const std::string text = e.what();
        for (const char* item : {"VK_KHR_push_descriptor", "synchronization2", "maintenance4", "timelineSemaphore",
                                 "shaderStorageImageWriteWithoutFormat", "enable at vkCreateDevice"})
            CHECK_MESSAGE(text.find(item) != std::string::npos, item);
    }
    HostVulkan bad_queue = host.objects();
    bad_queue.queue_family = 999;
    CHECK_THROWS_WITH_AS(Context{bad_queue}, doctest::Contains("a compute queue"), Error);
    HostVulkan no_device = host.objects();
    no_device.device = VK_NULL_HANDLE;
    CHECK_THROWS_AS(Context{no_device}, Error);
    CHECK(host.log().messages().empty());
}

TEST_CASE("The application's own image: mips and patch sampling in place, its image kept; missing usage refused") {
    HostRenderer host(true);
    Context context(host.objects());
    OwnImage image(host, 64, 40, kAllUsage);
    ImageF base(64, 40, 4);
    for (size_t i = 0; i < base.texels.size(); ++i) base.texels[i] = float((i * 7919) % 1000) / 1000.0f;
    {
        Texture texture = Texture::wrap(context, image.described());
        upload(context, texture, host_pixels(base));
        generate_mips(context, texture, MipFilter::box);
        const MipLevels levels = check_rgba32f_box_chain(
            [&](uint32_t l) { return readback_image(context, texture, l); }, base, texture.levels());
        FoveatedParams fovea;
        fovea.fixations = {{0.3, 0.6}};
        fovea.budget = 20;
        fovea.patch_size = 8;
        const PatchLayout layout = foveated_layout(64, 40, fovea).layout;
        VulkanPatchSampler sampler(context, layout, {.channels = 4});
        HostBuffer out(context.physical_device(), context.device(), PatchOutput{.channels = 4}.bytes(layout),
                       VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        std::memset(out.data(), 0xff, out.size());  // NaN poison
        context.queue().wait(sampler.sample(texture, out.handle(), 0, out.size()));
        const std::vector<float> got = test::output_values(out.data(), layout.output_values(4), false);
        const std::vector<MipLevels> images{levels};
        CHECK(test::sample_mismatches(
                  reference_sample_patches(layout, images, Format::rgba32f, 4, sampler.max_anisotropy()), got, false,
                  false) == 0);
        CHECK(texture.layout() == VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);  // where the steps left it
    }
    // The texture is gone, the image is not: the application can still use (and destroy) it.
    {
        Texture again = Texture::wrap(context, {host.device(), image.described().image, image.described().desc,
                                                kAllUsage, 0, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL});
        const ImageF level0 = readback_image(context, again, 0);
        CHECK(level0.texels == base.texels);
    }
    // Each step names the usage bits it lacks, before recording anything.
    OwnImage sampled_only(host, 32, 32, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT);
    Texture limited = Texture::wrap(context, sampled_only.described());
    const uint64_t before = context.queue().last_submitted();
    CHECK_THROWS_WITH_AS(generate_mips(context, limited, MipFilter::box),
                         doctest::Contains("VK_IMAGE_USAGE_STORAGE_BIT"), Error);
    CHECK_THROWS_WITH_AS(generate_mips(context, limited, MipFilter::blit),
                         doctest::Contains("VK_IMAGE_USAGE_TRANSFER_SRC_BIT"), Error);
    CHECK_THROWS_WITH_AS(readback(context, limited, 0, 0), doctest::Contains("VK_IMAGE_USAGE_TRANSFER_SRC_BIT"), Error);
    CHECK(context.queue().last_submitted() == before);  // nothing submitted
    ApplicationImage exportable = sampled_only.described();
    exportable.desc.exportable = true;
    CHECK_THROWS_WITH_AS(Texture::wrap(context, exportable), doctest::Contains("exportable_memory"), Error);
    ApplicationImage none = sampled_only.described();
    none.image = VK_NULL_HANDLE;
    CHECK_THROWS_AS(Texture::wrap(context, none), Error);
    for (const std::string& m : host.log().messages()) FAIL_CHECK(m);
    CHECK(host.log().messages().empty());
}

TEST_CASE("Recorded into the application's command buffer: upload, mips and patches in its own submission") {
    HostRenderer host(true);
    Context context(host.objects());
    {  // set-up: the box filter's table is uploaded once per context, on texturevlm's queue
        Texture warm = Texture::create(context, TextureDesc::sampled_2d(4, 4, Format::rgba32f));
        generate_mips(context, warm, MipFilter::box);
        context.queue().wait_all();
    }
    OwnImage image(host, 64, 40, kAllUsage);
    Texture texture = Texture::wrap(context, image.described());
    ImageF base(64, 40, 4);
    for (size_t i = 0; i < base.texels.size(); ++i) base.texels[i] = float((i * 4241) % 997) / 997.0f;
    const size_t bytes = base.texels.size() * sizeof(float);
    HostBuffer staging(context.physical_device(), context.device(), bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
    convert_host_pixels(host_pixels(base), Format::rgba32f, {reinterpret_cast<uint8_t*>(staging.data()), bytes});
    FoveatedParams fovea;
    fovea.fixations = {{0.6, 0.4}};
    fovea.budget = 20;
    fovea.patch_size = 8;
    const PatchLayout layout = foveated_layout(64, 40, fovea).layout;
    VulkanPatchSampler sampler(context, layout, {.channels = 4});
    HostBuffer out(context.physical_device(), context.device(), PatchOutput{.channels = 4}.bytes(layout),
                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    std::memset(out.data(), 0xff, out.size());  // NaN poison
    const uint64_t before = context.queue().last_submitted();
    host.submit([&](VkCommandBuffer cmd) {
        record_upload(cmd, texture, staging, {}, 64, 40);
        record_mips(context, cmd, texture, MipFilter::box);
        sampler.record(cmd, texture, out.handle(), 0, out.size());
    });
    CHECK(context.queue().last_submitted() == before);  // everything went in the application's submission
    const MipLevels levels = check_rgba32f_box_chain([&](uint32_t l) { return readback_image(context, texture, l); },
                                                     base, texture.levels());
    const std::vector<MipLevels> images{levels};
    CHECK(
        test::sample_mismatches(reference_sample_patches(layout, images, Format::rgba32f, 4, sampler.max_anisotropy()),
                                test::output_values(out.data(), layout.output_values(4), false), false, false) == 0);
    // Bad input is refused before anything is recorded.
    HostBuffer small(context.physical_device(), context.device(), 16, VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
    host.submit([&](VkCommandBuffer cmd) {
        CHECK_THROWS_WITH_AS(record_upload(cmd, texture, small, {}, 64, 40), doctest::Contains("staging buffer"),
                             Error);
        CHECK_THROWS_WITH_AS(record_upload(cmd, texture, staging, {.x = 1}, 64, 40), doctest::Contains("does not fit"),
                             Error);
        CHECK_THROWS_AS(sampler.record(cmd, texture, out.handle(), 0, out.size() - 4), Error);
    });
    for (const std::string& m : host.log().messages()) FAIL_CHECK(m);
    CHECK(host.log().messages().empty());
}

TEST_CASE("The application's image allocated exportable is exported as it is; an image that is not is copied") {
    HostRenderer host(true, {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME});
    Context context(host.objects());
    REQUIRE(context.memory_export());
    ImageF base(64, 40, 4);
    for (size_t i = 0; i < base.texels.size(); ++i) base.texels[i] = float((i * 6007) % 1009) / 1009.0f;

    // Exportable memory: the fd texturevlm exports is the application's image itself (a
    // texture imported from it reads what was uploaded into the application's image).
    OwnImage shared(host, 64, 40, kAllUsage, true);
    Texture wrapped = Texture::wrap(context, shared.described());
    CHECK(wrapped.desc().exportable);
    CHECK(wrapped.allocation_size() == shared.described().memory_size);
    upload(context, wrapped, host_pixels(base));
    context.queue().wait_all();
    {
        Texture imported = Texture::import_memory(context, wrapped.desc(), wrapped.export_memory_fd(),
                                                  wrapped.allocation_size());
        CHECK(readback_image(context, imported, 0).texels == base.texels);
    }
    ApplicationImage short_memory = shared.described();
    short_memory.memory_size -= 1;
    CHECK_THROWS_WITH_AS(Texture::wrap(context, short_memory), doctest::Contains("memory_size"), Error);

    // Not exportable: copied, in the application's submission, into an exportable texture.
    OwnImage own(host, 64, 40, kAllUsage);
    Texture frame = Texture::wrap(context, own.described());
    upload(context, frame, host_pixels(base));
    context.queue().wait_all();
    TextureDesc desc = frame.desc();
    desc.exportable = true;
    Texture copy = Texture::create(context, desc);
    host.submit([&](VkCommandBuffer cmd) { record_copy(cmd, frame, copy); });
    CHECK(readback_image(context, copy, 0).texels == base.texels);
    CHECK(copy.layout() == VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
    CHECK(frame.layout() == VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
    // Bad input: nothing recorded.
    Texture other = Texture::create(context, TextureDesc::sampled_2d(64, 41, Format::rgba32f));
    OwnImage no_source(host, 64, 40, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT);
    Texture unreadable = Texture::wrap(context, no_source.described());
    host.submit([&](VkCommandBuffer cmd) {
        CHECK_THROWS_WITH_AS(record_copy(cmd, frame, other), doctest::Contains("with the image's extent"), Error);
        CHECK_THROWS_WITH_AS(record_copy(cmd, unreadable, copy), doctest::Contains("VK_IMAGE_USAGE_TRANSFER_SRC_BIT"),
                             Error);
    });
    CHECK(readback_image(context, copy, 0).texels == base.texels);
    for (const std::string& m : host.log().messages()) FAIL_CHECK(m);
    CHECK(host.log().messages().empty());
}

TEST_CASE("Exportable application memory needs a device that can export it") {
    HostRenderer host(true);  // no VK_KHR_external_memory_fd
    Context context(host.objects());
    CHECK_FALSE(context.memory_export());
    OwnImage image(host, 16, 16, kAllUsage);
    ApplicationImage claimed = image.described();
    claimed.exportable_memory = reinterpret_cast<VkDeviceMemory>(uintptr_t{1});
    claimed.memory_size = 1 << 20;
    CHECK_THROWS_WITH_AS(Texture::wrap(context, claimed), doctest::Contains("VK_KHR_external_memory_fd"), Error);
    Texture plain = Texture::wrap(context, image.described());
    CHECK_THROWS_WITH_AS(plain.export_memory_fd(), doctest::Contains("exportable_memory"), Error);
}

TEST_CASE("An image of another device is refused; a layout that is not the image's is reported by validation") {
    HostRenderer host(true), other(true);
    Context context(host.objects());
    OwnImage foreign(other, 16, 16, kAllUsage);
    CHECK_THROWS_WITH_AS(Texture::wrap(context, foreign.described()), doctest::Contains("another VkDevice"), Error);

    // Vulkan cannot be asked an image's layout: texturevlm trusts ApplicationImage::layout.
    // A wrong one is a Vulkan usage error, which the validation layers name at submission.
    OwnImage image(host, 16, 16, kAllUsage);  // new: UNDEFINED
    ApplicationImage claimed = image.described();
    claimed.layout = VK_IMAGE_LAYOUT_GENERAL;
    Texture texture = Texture::wrap(context, claimed);
    host.submit([&](VkCommandBuffer cmd) { record_mips(context, cmd, texture, MipFilter::box); });
    const std::vector<std::string> messages = host.log().messages();
    REQUIRE_FALSE(messages.empty());
    CHECK(messages.front().find("layout") != std::string::npos);
    host.log().clear();
}
