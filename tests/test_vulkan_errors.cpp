// Bad input to the Vulkan engine: clear errors, nothing changed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>

#include "engine/core/device_choice.h"
#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "tests/random_image.h"
#include "engine/textures/texture.h"
#include "engine/textures/transfer.h"
#include "engine/core/vk_check.h"
#include "tests/vulkan_fixture.h"

using namespace tvlm;
using namespace tvlm::test;

TEST_CASE_FIXTURE(VulkanFixture, "texture sizes, layers and levels out of range") {
    const uint32_t max = context.limits().maxImageDimension2D;
    CHECK_THROWS_WITH_AS(Texture::create(context, TextureDesc::sampled_2d(0, 4, Format::rgba8_unorm)),
                         doctest::Contains("empty"), Error);
    CHECK_THROWS_WITH_AS(Texture::create(context, TextureDesc::sampled_2d(4, 0, Format::rgba8_unorm)),
                         doctest::Contains("empty"), Error);
    CHECK_THROWS_WITH_AS(Texture::create(context, TextureDesc::sampled_2d(max + 1, 4, Format::rgba8_unorm)),
                         doctest::Contains("maxImageDimension2D"), Error);
    CHECK_THROWS_WITH_AS(Texture::create(context, TextureDesc::sampled_array(4, 4, 0, Format::rgba8_unorm)),
                         doctest::Contains("layer count"), Error);
    CHECK_THROWS_WITH_AS(Texture::create(context, TextureDesc::sampled_2d(16, 16, Format::rgba8_unorm, 6)),
                         doctest::Contains("at most 5 mip levels"), Error);
}

// A texture over twice the largest heap: refused before Vulkan is asked for it (asking for
// more than a heap or maxResourceSize holds is invalid usage, which validation reports), with
// one clear error, and the context goes on working (no half-made texture left).
TEST_CASE_FIXTURE(VulkanFixture, "a texture the device memory cannot hold is refused and the next one works") {
    VkPhysicalDeviceMemoryProperties memory{};
    vkGetPhysicalDeviceMemoryProperties(context.physical_device(), &memory);
    VkDeviceSize largest = 0;
    for (uint32_t h = 0; h < memory.memoryHeapCount; ++h) largest = std::max(largest, memory.memoryHeaps[h].size);
    constexpr VkDeviceSize kLayerBytes = VkDeviceSize{16384} * 16384 * 16;  // rgba32f, level 0
    const auto layers = uint32_t(
        std::min<VkDeviceSize>(2 * largest / kLayerBytes + 1, context.limits().maxImageArrayLayers));
    REQUIRE(VkDeviceSize{layers} * kLayerBytes > largest);
    for (int attempt = 0; attempt < 3; ++attempt)
        CHECK_THROWS_WITH_AS(
            Texture::create(context, TextureDesc::sampled_array(16384, 16384, layers, Format::rgba32f)),
            doctest::Contains(": use a smaller image or batch"), Error);  // over the image or heap limit
    Texture small = Texture::create(context, TextureDesc::sampled_2d(64, 48, Format::rgba8_unorm));
    const ImageF image = random_image(64, 48, Format::rgba8_unorm, 5);
    upload(context, small, host_pixels(image));
    generate_mips(context, small, MipFilter::box);
    CHECK(readback_image(context, small, 0).texels == image.texels);
    CHECK(context.validation_log().count() == 0);
}

TEST_CASE_FIXTURE(VulkanFixture, "readback and upload outside the texture fail and change nothing") {
    Texture texture = Texture::create(context, TextureDesc::sampled_array(16, 8, 2, Format::rgba8_unorm));
    const ImageF base = random_image(16, 8, Format::rgba8_unorm, 3);
    upload(context, texture, host_pixels(base));
    CHECK_THROWS_WITH_AS(readback(context, texture, 5), doctest::Contains("mip level 5 does not exist"), Error);
    CHECK_THROWS_WITH_AS(readback(context, texture, 0, 2), doctest::Contains("layer 2 does not exist"), Error);
    const ImageF patch = random_image(4, 4, Format::rgba8_unorm, 4);
    CHECK_THROWS_WITH_AS(upload(context, texture, host_pixels(patch), {.x = 13}), doctest::Contains("does not fit"),
                         Error);
    CHECK_THROWS_WITH_AS(upload(context, texture, host_pixels(patch), {.layer = 3}), doctest::Contains("layer 3"),
                         Error);
    const uint8_t two[8] = {};
    CHECK_THROWS_WITH_AS(upload(context, texture, HostPixels{two, ComponentType::u8, 2, 2, 2, 0}),
                         doctest::Contains("2-channel"), Error);
    CHECK_THROWS_WITH_AS(upload(context, texture, HostPixels{nullptr, ComponentType::u8, 2, 2, 4, 0}),
                         doctest::Contains("empty"), Error);
    CHECK(readback_image(context, texture, 0).texels == base.texels);  // unchanged
}

TEST_CASE_FIXTURE(VulkanFixture, "FrameUploader: frames of every layer land in level 0, buffers reused in turn") {
    for (Format format : {Format::rgba8_unorm, Format::rgba16f}) {
        CAPTURE(format_info(format).name);
        const TextureDesc desc = TextureDesc::sampled_array(37, 21, 3, format);
        Texture texture = Texture::create(context, desc);
        FrameUploader uploader(context, desc, 2);
        for (uint32_t frame = 0; frame < 5; ++frame) {  // more frames than buffers
            CAPTURE(frame);
            std::vector<std::vector<uint8_t>> layers;
            std::vector<uint8_t> texels;
            for (uint32_t l = 0; l < 3; ++l) {
                layers.push_back(encode_texels(random_image(37, 21, format, 10 * frame + l), format));
                texels.insert(texels.end(), layers.back().begin(), layers.back().end());
            }
            REQUIRE(texels.size() == uploader.frame_bytes());
            uploader.upload(texture, texels.data());
            texels.assign(texels.size(), 0);  // the uploader copied the frame: the caller may reuse it
            for (uint32_t l = 0; l < 3; ++l) CHECK(readback(context, texture, 0, l) == layers[l]);
        }
        // Written straight into the staging buffer: the same result.
        const std::vector<uint8_t> staged = encode_texels(random_image(37, 21 * 3, format, 99), format);
        std::memcpy(uploader.next_staging().data(), staged.data(), staged.size());
        uploader.upload_staged(texture);
        const size_t layer_bytes = staged.size() / 3;
        CHECK(readback(context, texture, 0, 2) ==
              std::vector<uint8_t>(staged.begin() + 2 * std::ptrdiff_t(layer_bytes), staged.end()));
        CHECK_THROWS_WITH_AS(uploader.upload_staged(texture), doctest::Contains("without next_staging"), Error);
        Texture other = Texture::create(context, TextureDesc::sampled_array(37, 21, 2, format));
        const std::vector<uint8_t> frame(uploader.frame_bytes(), 7);
        CHECK_THROWS_WITH_AS(uploader.upload(other, frame.data()), doctest::Contains("another size"), Error);
        CHECK_THROWS_WITH_AS(uploader.upload(texture, nullptr), doctest::Contains("null"), Error);
        CHECK(readback(context, other, 0, 0) != std::vector<uint8_t>(37 * 21 * format_info(format).texel_bytes(), 7));
    }
    CHECK_THROWS_WITH_AS(FrameUploader(context, TextureDesc::sampled_2d(4, 4, Format::rgba8_unorm), 0),
                         doctest::Contains("at least one"), Error);
}

TEST_CASE_FIXTURE(VulkanFixture, "device selection explains every rejection") {
    const auto& devices = std::vector<DeviceInfo>{context.device_info()};
    CHECK(choose_device(devices, DeviceSelector::parse("")) == 0);
    CHECK(choose_device(devices, DeviceSelector::parse("0")) == 0);
    CHECK(choose_device(devices, DeviceSelector::parse(context.device_info().uuid.str())) == 0);
    CHECK_THROWS_WITH_AS(choose_device(devices, DeviceSelector::parse("7")), doctest::Contains("not index 7"), Error);
    CHECK_THROWS_WITH_AS(choose_device(devices, DeviceSelector::parse("NoSuchGPU")),
                         doctest::Contains("name does not contain 'NoSuchGPU'"), Error);
    CHECK_THROWS_WITH_AS(choose_device(devices, DeviceSelector::parse("00112233-4455-6677-8899-aabbccddeeff")),
                         doctest::Contains("differs from 00112233-4455-6677-8899-aabbccddeeff"), Error);
    CHECK_THROWS_WITH_AS(choose_device({}, DeviceSelector{}), doctest::Contains("mesa-vulkan-drivers"), Error);
    const std::string name = context.device_info().name;  // the rejected device is listed by name
    CHECK_THROWS_WITH_AS(Context(ContextDesc{.device = DeviceSelector::parse("NoSuchGPU"), .validation = true}),
                         doctest::Contains(name.c_str()), Error);
}

TEST_CASE_FIXTURE(VulkanFixture, "names of filters are checked") {
    CHECK_THROWS_WITH_AS(parse_mip_filter("lanczos"), doctest::Contains("expected blit or box"), Error);
}

TEST_CASE("validation messages are caught: the test harness can fail") {
    Context& context = shared_context();
    context.validation_log().clear();
    // The messenger counts what reaches it...
    VkDebugUtilsMessengerCallbackDataEXT data{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT};
    data.pMessage = "injected by the test: the harness must count this";
    vkSubmitDebugUtilsMessageEXT(context.instance(), VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT, &data);
    CHECK(context.validation_log().count() == 1);
    context.validation_log().clear();
    // ...and the layer really validates: an image with a zero extent is invalid usage. Only on
    // CPU drivers (lavapipe), which survive the invalid call the layer passes down.
    if (context.device_info().type != "cpu") return;
    VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = VK_FORMAT_R8G8B8A8_UNORM;
    info.extent = {0, 0, 1};
    info.mipLevels = 1;
    info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.usage = VK_IMAGE_USAGE_SAMPLED_BIT;
    VkImage image = VK_NULL_HANDLE;
    if (vkCreateImage(context.device(), &info, nullptr, &image) == VK_SUCCESS && image)
        vkDestroyImage(context.device(), image, nullptr);
    CHECK(context.validation_log().count() > 0);
    context.validation_log().clear();
}
