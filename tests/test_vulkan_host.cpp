// A Context that adopts an application's Vulkan instance, device and queue
// (engine/host_vulkan.h): the work done on the host's device matches the reference, the
// context destroys nothing of the host's, a device without what texturevlm needs is refused
// with every missing item named, and an adopted context works beside a self-created one.
// The "host" here is raw Vulkan with its own validation messenger: any message fails.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "context.h"
#include "device_memory.h"
#include "error.h"
#include "host_buffer.h"
#include "patch_layouts.h"
#include "reference_sampling.h"
#include "sampling_check.h"
#include "vulkan_patch_sampler.h"
#include "generate_mips.h"
#include "loader.h"
#include "reference_mips.h"
#include "texture.h"
#include "transfer.h"
#include "validation.h"
#include "vk_check.h"
#include "vulkan_fixture.h"

using namespace tvlm;

namespace {

// What an application does before it ever hears of texturevlm: its own instance (with
// validation), a device with the features it chose, a queue.
class HostRenderer {
public:
    explicit HostRenderer(bool with_requirements) {
        load_vulkan_loader();
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.apiVersion = VK_API_VERSION_1_3;
        const char* layers[] = {"VK_LAYER_KHRONOS_validation"};
        const char* instance_extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
        VkDebugUtilsMessengerCreateInfoEXT messenger_info = log_.messenger_info();
        VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, &messenger_info};
        info.pApplicationInfo = &app;
        info.enabledLayerCount = 1;
        info.ppEnabledLayerNames = layers;
        info.enabledExtensionCount = 1;
        info.ppEnabledExtensionNames = instance_extensions;
        check_vk(vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");
        volkLoadInstance(instance_);
        check_vk(vkCreateDebugUtilsMessengerEXT(instance_, &messenger_info, nullptr, &messenger_),
                 "vkCreateDebugUtilsMessengerEXT");
        uint32_t count = 1;
        vkEnumeratePhysicalDevices(instance_, &count, &physical_);
        REQUIRE(physical_ != VK_NULL_HANDLE);
        uint32_t families = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
        std::vector<VkQueueFamilyProperties> props(families);
        vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, props.data());
        while (family_ < families && !(props[family_].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++family_;
        REQUIRE(family_ < families);

        VkPhysicalDeviceFeatures supported;
        vkGetPhysicalDeviceFeatures(physical_, &supported);
        f13_.synchronization2 = f13_.maintenance4 = with_requirements;
        f12_.timelineSemaphore = with_requirements;
        f12_.pNext = &f13_;
        f11_.pNext = &f12_;
        features_.pNext = &f11_;
        features_.features.shaderStorageImageWriteWithoutFormat = with_requirements;
        features_.features.shaderFloat64 = supported.shaderFloat64;
        if (with_requirements) extensions_.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
        const float priority = 1.0f;
        VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        queue.queueFamilyIndex = family_;
        queue.queueCount = 1;
        queue.pQueuePriorities = &priority;
        VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features_};
        device_info.queueCreateInfoCount = 1;
        device_info.pQueueCreateInfos = &queue;
        device_info.enabledExtensionCount = static_cast<uint32_t>(extensions_.size());
        device_info.ppEnabledExtensionNames = extensions_.data();
        check_vk(vkCreateDevice(physical_, &device_info, nullptr, &device_), "vkCreateDevice");
    }
    HostRenderer(const HostRenderer&) = delete;
    HostRenderer& operator=(const HostRenderer&) = delete;
    ~HostRenderer() {
        vkDestroyDevice(device_, nullptr);
        vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
        vkDestroyInstance(instance_, nullptr);
    }

    HostVulkan objects() const {
        HostVulkan host;
        host.instance = instance_;
        host.physical_device = physical_;
        host.device = device_;
        host.queue_family = family_;
        host.enabled_features = &features_;
        for (const char* e : extensions_) host.enabled_extensions.emplace_back(e);
        return host;
    }
    VkDevice device() const { return device_; }
    VkPhysicalDevice physical_device() const { return physical_; }
    ValidationLog& log() { return log_; }

private:
    ValidationLog log_;
    VkInstance instance_ = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    uint32_t family_ = 0;
    VkPhysicalDeviceVulkan13Features f13_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features f12_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan11Features f11_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceFeatures2 features_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    std::vector<const char*> extensions_;
};

// A box chain on `context`'s device, level 2 against the reference.
double chain_difference(Context& context) {
    ImageF base(29, 18, 4);
    for (size_t i = 0; i < base.texels.size(); ++i) base.texels[i] = float((i * 7919) % 1000) / 1000.0f;
    Texture texture = Texture::create(context, TextureDesc::sampled_2d(29, 18, Format::rgba32f));
    upload(context, texture, host_pixels(base));
    generate_mips(context, texture, MipFilter::box);
    const ImageF got = readback_image(context, texture, 2);
    const ImageF want = reference_mip_chain(base, Format::rgba32f, MipFilter::box, 3)[2];
    REQUIRE(got.texels.size() == want.texels.size());
    double worst = 0;
    for (size_t i = 0; i < got.texels.size(); ++i) worst = std::max(worst, double(std::abs(got.texels[i] - want.texels[i])));
    return worst;
}

// An image the application creates and owns (with its memory): RGBA32F, the full chain.
class OwnImage {
public:
    OwnImage(const HostRenderer& host, uint32_t width, uint32_t height, VkImageUsageFlags usage)
        : device_(host.device()), usage_(usage), width_(width), height_(height) {
        VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
        info.imageType = VK_IMAGE_TYPE_2D;
        info.format = VK_FORMAT_R32G32B32A32_SFLOAT;
        info.extent = {width, height, 1};
        info.mipLevels = full_mip_count(width, height);
        info.arrayLayers = 1;
        info.samples = VK_SAMPLE_COUNT_1_BIT;
        info.tiling = VK_IMAGE_TILING_OPTIMAL;
        info.usage = usage;
        info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
        check_vk(vkCreateImage(device_, &info, nullptr, &image_), "vkCreateImage");
        VkMemoryRequirements req;
        vkGetImageMemoryRequirements(device_, image_, &req);
        memory_ = allocate_memory(device_, req.size,
                                  find_memory_type(host.physical_device(), req.memoryTypeBits,
                                                   VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT), nullptr);
        check_vk(vkBindImageMemory(device_, image_, memory_.handle(), 0), "vkBindImageMemory");
    }
    OwnImage(const OwnImage&) = delete;
    OwnImage& operator=(const OwnImage&) = delete;
    ~OwnImage() { vkDestroyImage(device_, image_, nullptr); }  // the memory after it (member order)

    ApplicationImage described() const {
        return {image_, TextureDesc::sampled_2d(width_, height_, Format::rgba32f), usage_, 0, VK_IMAGE_LAYOUT_UNDEFINED};
    }

private:
    VkDevice device_;
    DeviceMemory memory_;
    VkImage image_ = VK_NULL_HANDLE;
    VkImageUsageFlags usage_;
    uint32_t width_, height_;
};

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
        const std::vector<ImageF> want = reference_mip_chain(base, Format::rgba32f, MipFilter::box, texture.levels());
        MipLevels levels;
        for (uint32_t l = 0; l < texture.levels(); ++l) {
            levels.push_back(readback_image(context, texture, l));
            double worst = 0;
            for (size_t i = 0; i < want[l].texels.size(); ++i)
                worst = std::max(worst, double(std::abs(levels[l].texels[i] - want[l].texels[i])));
            CHECK_MESSAGE(worst <= 1e-6, "level " << l);
        }
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
        CHECK(test::sample_mismatches(reference_sample_patches(layout, images, Format::rgba32f, 4, sampler.max_anisotropy()),
                                      got, false, false) == 0);
        CHECK(texture.layout() == VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);  // where the steps left it
    }
    // The texture is gone, the image is not: the application can still use (and destroy) it.
    {
        Texture again = Texture::wrap(context, {image.described().image, image.described().desc, kAllUsage, 0,
                                                VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL});
        const ImageF level0 = readback_image(context, again, 0);
        CHECK(level0.texels == base.texels);
    }
    // Each step names the usage bits it lacks, before recording anything.
    OwnImage sampled_only(host, 32, 32, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT);
    Texture limited = Texture::wrap(context, sampled_only.described());
    const uint64_t before = context.queue().last_submitted();
    CHECK_THROWS_WITH_AS(generate_mips(context, limited, MipFilter::box), doctest::Contains("VK_IMAGE_USAGE_STORAGE_BIT"),
                         Error);
    CHECK_THROWS_WITH_AS(generate_mips(context, limited, MipFilter::blit),
                         doctest::Contains("VK_IMAGE_USAGE_TRANSFER_SRC_BIT"), Error);
    CHECK_THROWS_WITH_AS(readback(context, limited, 0, 0), doctest::Contains("VK_IMAGE_USAGE_TRANSFER_SRC_BIT"), Error);
    CHECK(context.queue().last_submitted() == before);  // nothing submitted
    ApplicationImage exportable = sampled_only.described();
    exportable.desc.exportable = true;
    CHECK_THROWS_WITH_AS(Texture::wrap(context, exportable), doctest::Contains("not exportable"), Error);
    ApplicationImage none = sampled_only.described();
    none.image = VK_NULL_HANDLE;
    CHECK_THROWS_AS(Texture::wrap(context, none), Error);
    for (const std::string& m : host.log().messages()) FAIL_CHECK(m);
    CHECK(host.log().messages().empty());
}
