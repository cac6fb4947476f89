// An application that renders with Vulkan and feeds a vision model with texturevlm: it
// owns its instance, device, queue, image and command buffers; each frame it draws a scene
// with a graphics pipeline (dynamic rendering) into its image, then records texturevlm's box
// mip chain and 273 foveated patches of that image into the same command buffer, submits,
// and checks them against texturevlm's CPU reference. Writes frame_N.png and patches.png.
//
//   host_renderer [--frames N] [--out DIR]        (TVLM_VALIDATION=1: validation layers on;
//                                                   any message makes the run fail)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "context.h"
#include "device_memory.h"
#include "error.h"
#include "generate_mips.h"
#include "host_buffer.h"
#include "image_files.h"
#include "instance.h"
#include "loader.h"
#include "patch_layouts.h"
#include "reference_mips.h"
#include "reference_sampling.h"
#include "barriers.h"
#include "texture.h"
#include "tolerance.h"
#include "transfer.h"
#include "validation.h"
#include "vk_check.h"
#include "vulkan_patch_sampler.h"

namespace tvlm::shaders {
std::span<const uint32_t> scene_vert();
std::span<const uint32_t> scene_frag();
}  // namespace tvlm::shaders

using namespace tvlm;

namespace {

constexpr uint32_t kSize = 512;
constexpr VkFormat kFormat = VK_FORMAT_R8G8B8A8_UNORM;

// Everything the renderer owns, destroyed in reverse order of creation.
struct Renderer {
    ValidationLog log;
    bool validation = validation_requested_by_env();
    VkInstance instance = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    uint32_t family = 0;
    VkQueue queue = VK_NULL_HANDLE;
    VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    std::vector<const char*> extensions{VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
    VkImage image = VK_NULL_HANDLE;
    DeviceMemory memory;
    VkImageView target = VK_NULL_HANDLE;  // level 0, rendered to
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkCommandPool pool = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;

    Renderer() {
        load_vulkan_loader();
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.pApplicationName = "host_renderer";
        app.apiVersion = VK_API_VERSION_1_3;
        const char* layer = "VK_LAYER_KHRONOS_validation";
        const char* debug = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
        VkDebugUtilsMessengerCreateInfoEXT messenger_info = log.messenger_info();
        VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, validation ? &messenger_info : nullptr};
        info.pApplicationInfo = &app;
        info.enabledLayerCount = validation ? 1 : 0;
        info.ppEnabledLayerNames = &layer;
        info.enabledExtensionCount = validation ? 1 : 0;
        info.ppEnabledExtensionNames = &debug;
        check_vk(vkCreateInstance(&info, nullptr, &instance), "vkCreateInstance");
        volkLoadInstance(instance);
        if (validation)
            check_vk(vkCreateDebugUtilsMessengerEXT(instance, &messenger_info, nullptr, &messenger),
                     "vkCreateDebugUtilsMessengerEXT");
        uint32_t count = 1;
        vkEnumeratePhysicalDevices(instance, &count, &physical);
        if (!physical) throw Error("no Vulkan device");
        uint32_t families = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
        std::vector<VkQueueFamilyProperties> props(families);
        vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, props.data());
        const VkQueueFlags wanted = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
        while (family < families && (props[family].queueFlags & wanted) != wanted) ++family;
        if (family == families) throw Error("no queue family with graphics and compute");
        // What the renderer wants (dynamic rendering) and what texturevlm needs
        // (engine/host_vulkan.h), enabled together.
        VkPhysicalDeviceFeatures supported;
        vkGetPhysicalDeviceFeatures(physical, &supported);
        f13.dynamicRendering = f13.synchronization2 = f13.maintenance4 = VK_TRUE;
        f12.timelineSemaphore = VK_TRUE;
        f12.pNext = &f13;
        features.pNext = &f12;
        features.features.shaderStorageImageWriteWithoutFormat = VK_TRUE;
        features.features.shaderFloat64 = supported.shaderFloat64;
        const float priority = 1.0f;
        VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        queue_info.queueFamilyIndex = family;
        queue_info.queueCount = 1;
        queue_info.pQueuePriorities = &priority;
        VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
        device_info.queueCreateInfoCount = 1;
        device_info.pQueueCreateInfos = &queue_info;
        device_info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
        device_info.ppEnabledExtensionNames = extensions.data();
        check_vk(vkCreateDevice(physical, &device_info, nullptr, &device), "vkCreateDevice");
        vkGetDeviceQueue(device, family, 0, &queue);
        make_image();
        make_pipeline();
        VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pool_info.queueFamilyIndex = family;
        check_vk(vkCreateCommandPool(device, &pool_info, nullptr, &pool), "vkCreateCommandPool");
        VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        check_vk(vkCreateFence(device, &fence_info, nullptr, &fence), "vkCreateFence");
    }
    Renderer(const Renderer&) = delete;
    Renderer& operator=(const Renderer&) = delete;
    ~Renderer() {
        if (device) vkDeviceWaitIdle(device);
        vkDestroyFence(device, fence, nullptr);
        vkDestroyCommandPool(device, pool, nullptr);
        vkDestroyPipeline(device, pipeline, nullptr);
        vkDestroyPipelineLayout(device, layout, nullptr);
        vkDestroyImageView(device, target, nullptr);
        vkDestroyImage(device, image, nullptr);
        memory = DeviceMemory();
        vkDestroyDevice(device, nullptr);
        if (messenger) vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
        vkDestroyInstance(instance, nullptr);
    }

    void make_image() {
        VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
        info.imageType = VK_IMAGE_TYPE_2D;
        info.format = kFormat;
        info.extent = {kSize, kSize, 1};
        info.mipLevels = full_mip_count(kSize, kSize);
        info.arrayLayers = 1;
        info.samples = VK_SAMPLE_COUNT_1_BIT;
        info.tiling = VK_IMAGE_TILING_OPTIMAL;
        // Rendered to, then read and written by texturevlm (sampled, storage, copies).
        info.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT |
                     VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
        check_vk(vkCreateImage(device, &info, nullptr, &image), "vkCreateImage");
        VkMemoryRequirements req;
        vkGetImageMemoryRequirements(device, image, &req);
        memory = allocate_memory(device, req.size,
                                 find_memory_type(physical, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT),
                                 nullptr);
        check_vk(vkBindImageMemory(device, image, memory.handle(), 0), "vkBindImageMemory");
        VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
        view.image = image;
        view.viewType = VK_IMAGE_VIEW_TYPE_2D;
        view.format = kFormat;
        view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        check_vk(vkCreateImageView(device, &view, nullptr, &target), "vkCreateImageView");
    }

    VkShaderModule module(std::span<const uint32_t> words) const {
        VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        info.codeSize = words.size_bytes();
        info.pCode = words.data();
        VkShaderModule m = VK_NULL_HANDLE;
        check_vk(vkCreateShaderModule(device, &info, nullptr, &m), "vkCreateShaderModule");
        return m;
    }

    void make_pipeline() {
        VkPushConstantRange push{VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(float)};
        VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        layout_info.pushConstantRangeCount = 1;
        layout_info.pPushConstantRanges = &push;
        check_vk(vkCreatePipelineLayout(device, &layout_info, nullptr, &layout), "vkCreatePipelineLayout");
        const VkShaderModule vert = module(shaders::scene_vert()), frag = module(shaders::scene_frag());
        VkPipelineShaderStageCreateInfo stages[2] = {{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO},
                                                     {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO}};
        stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
        stages[0].module = vert;
        stages[0].pName = "main";
        stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
        stages[1].module = frag;
        stages[1].pName = "main";
        VkPipelineVertexInputStateCreateInfo vertex_input{VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
        VkPipelineInputAssemblyStateCreateInfo assembly{VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
        assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
        VkPipelineViewportStateCreateInfo viewport{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
        viewport.viewportCount = viewport.scissorCount = 1;
        VkPipelineRasterizationStateCreateInfo raster{VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
        raster.polygonMode = VK_POLYGON_MODE_FILL;
        raster.cullMode = VK_CULL_MODE_NONE;
        raster.lineWidth = 1.0f;
        VkPipelineMultisampleStateCreateInfo multisample{VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
        multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
        VkPipelineColorBlendAttachmentState blend_attachment{};
        blend_attachment.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                                          VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
        VkPipelineColorBlendStateCreateInfo blend{VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
        blend.attachmentCount = 1;
        blend.pAttachments = &blend_attachment;
        const VkDynamicState dynamic_states[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
        VkPipelineDynamicStateCreateInfo dynamic{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
        dynamic.dynamicStateCount = 2;
        dynamic.pDynamicStates = dynamic_states;
        VkPipelineRenderingCreateInfo rendering{VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
        rendering.colorAttachmentCount = 1;
        rendering.pColorAttachmentFormats = &kFormat;
        VkGraphicsPipelineCreateInfo info{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, &rendering};
        info.stageCount = 2;
        info.pStages = stages;
        info.pVertexInputState = &vertex_input;
        info.pInputAssemblyState = &assembly;
        info.pViewportState = &viewport;
        info.pRasterizationState = &raster;
        info.pMultisampleState = &multisample;
        info.pColorBlendState = &blend;
        info.pDynamicState = &dynamic;
        info.layout = layout;
        const VkResult r = vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);
        vkDestroyShaderModule(device, vert, nullptr);
        vkDestroyShaderModule(device, frag, nullptr);
        check_vk(r, "vkCreateGraphicsPipelines");
    }

    HostVulkan objects() const {
        HostVulkan host;
        host.instance = instance;
        host.physical_device = physical;
        host.device = device;
        host.queue_family = family;
        host.enabled_features = &features;
        for (const char* e : extensions) host.enabled_extensions.emplace_back(e);
        return host;
    }

    // The scene at `time` into level 0 (the whole image moved to COLOR_ATTACHMENT first:
    // texturevlm tracks one layout for the image).
    void draw(VkCommandBuffer cmd, Texture& frame, float time) {
        record_barrier(cmd, {.image = image, .old_layout = frame.layout(),
                             .new_layout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL});
        frame.set_layout(VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL);
        VkRenderingAttachmentInfo color{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
        color.imageView = target;
        color.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
        color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
        color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
        color.clearValue.color = {{0.08f, 0.08f, 0.1f, 1.0f}};
        VkRenderingInfo rendering{VK_STRUCTURE_TYPE_RENDERING_INFO};
        rendering.renderArea = {{0, 0}, {kSize, kSize}};
        rendering.layerCount = 1;
        rendering.colorAttachmentCount = 1;
        rendering.pColorAttachments = &color;
        vkCmdBeginRendering(cmd, &rendering);
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline);
        const VkViewport viewport{0, 0, float(kSize), float(kSize), 0, 1};
        const VkRect2D scissor{{0, 0}, {kSize, kSize}};
        vkCmdSetViewport(cmd, 0, 1, &viewport);
        vkCmdSetScissor(cmd, 0, 1, &scissor);
        vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(float), &time);
        vkCmdDraw(cmd, 27, 1, 0, 0);
        vkCmdEndRendering(cmd);
    }
};

Rgba8Image to_bytes(const ImageF& image) {
    Rgba8Image out{image.width, image.height, std::vector<uint8_t>(size_t{image.width} * image.height * 4, 255)};
    for (size_t t = 0; t < size_t{image.width} * image.height; ++t)
        for (uint32_t c = 0; c < std::min(image.channels, 4u); ++c)
            out.texels[t * 4 + c] = uint8_t(std::lround(std::clamp(image.texels[t * image.channels + c], 0.0f, 1.0f) * 255));
    return out;
}

// The patches [N, 3, P, P] tiled row by row into one picture, padding slots black.
Rgba8Image patch_sheet(const std::vector<float>& values, size_t patches, uint32_t p) {
    const uint32_t columns = 24, rows = uint32_t((patches + columns - 1) / columns);
    Rgba8Image sheet{columns * (p + 1), rows * (p + 1), {}};
    sheet.texels.assign(size_t{sheet.width} * sheet.height * 4, 0);
    for (size_t i = 3; i < sheet.texels.size(); i += 4) sheet.texels[i] = 255;  // opaque black gaps
    for (size_t n = 0; n < patches; ++n)
        for (uint32_t k = 0; k < p; ++k)
            for (uint32_t j = 0; j < p; ++j) {
                const size_t x = (n % columns) * (p + 1) + j, y = (n / columns) * (p + 1) + k;
                for (uint32_t c = 0; c < 3; ++c) {
                    const float v = values[((n * 3 + c) * p + k) * p + j];
                    sheet.texels[(y * sheet.width + x) * 4 + c] = uint8_t(std::lround(std::clamp(v, 0.0f, 1.0f) * 255));
                }
            }
    return sheet;
}

int run(int frames, const std::string& out_dir) {
    std::filesystem::create_directories(out_dir);
    Renderer renderer;
    Context context(renderer.objects());
    Texture frame = Texture::wrap(context, {renderer.image, TextureDesc::sampled_2d(kSize, kSize, Format::rgba8_unorm),
                                            VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_SAMPLED_BIT |
                                                VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                                VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                                            0, VK_IMAGE_LAYOUT_UNDEFINED});
    FoveatedParams fovea;
    fovea.fixations = {{0.4, 0.6}};
    fovea.fill_budget = true;  // 273 tokens, as a vision encoder built for 273 wants
    const PatchLayout layout = foveated_layout(kSize, kSize, fovea).layout;
    const PatchOutput output{.channels = 3};
    VulkanPatchSampler sampler(context, layout, output);
    HostBuffer patches(context.physical_device(), context.device(), output.bytes(layout),
                       VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = renderer.pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    check_vk(vkAllocateCommandBuffers(renderer.device, &alloc, &cmd), "vkAllocateCommandBuffers");
    bool all_match = true;
    for (int f = 0; f < frames; ++f) {
        // One command buffer per frame: the scene, then texturevlm's work on the same image.
        std::memset(patches.data(), 0xff, patches.size());  // NaN poison
        check_vk(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        check_vk(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
        renderer.draw(cmd, frame, 0.4f * float(f));
        record_mips(context, cmd, frame, MipFilter::box);
        sampler.record(cmd, frame, patches.handle(), 0, patches.size());
        check_vk(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &cmd;
        check_vk(vkQueueSubmit(renderer.queue, 1, &submit, renderer.fence), "vkQueueSubmit");
        check_vk(vkWaitForFences(renderer.device, 1, &renderer.fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        check_vk(vkResetFences(renderer.device, 1, &renderer.fence), "vkResetFences");

        // Check the frame's mips and patches against texturevlm's CPU reference.
        MipLevels levels;
        for (uint32_t l = 0; l < frame.levels(); ++l) levels.push_back(readback_image(context, frame, l));
        const std::vector<ImageF> want = reference_mip_chain(levels[0], Format::rgba8_unorm, MipFilter::box,
                                                             frame.levels());
        size_t mip_errors = 0;
        for (uint32_t l = 1; l < frame.levels(); ++l)
            for (size_t i = 0; i < want[l].texels.size(); ++i)
                mip_errors += levels[l].texels[i] != want[l].texels[i];  // the RGBA8 box chain is exact
        std::vector<float> got(layout.output_values(3));
        std::memcpy(got.data(), patches.data(), got.size() * sizeof(float));
        const std::vector<MipLevels> images{levels};
        const std::vector<float> expected =
            reference_sample_patches(layout, images, Format::rgba8_unorm, 3, sampler.max_anisotropy());
        size_t patch_errors = 0;
        for (size_t i = 0; i < got.size(); ++i)
            patch_errors += !(std::fabs(got[i] - expected[i]) <= sample_tolerance(false, false, expected[i]));
        const std::string name = out_dir + "/frame_" + std::to_string(f) + ".png";
        write_png(name, to_bytes(levels[0]));
        std::printf("frame %d: %s, %u levels (%zu texels off the reference), %zu patches of %ux%u (%zu values off "
                    "the reference)\n",
                    f, name.c_str(), frame.levels(), mip_errors, layout.patches.size(), layout.patch_size,
                    layout.patch_size, patch_errors);
        all_match = all_match && mip_errors == 0 && patch_errors == 0;
        if (f == frames - 1) write_png(out_dir + "/patches.png", patch_sheet(got, layout.patches.size(), layout.patch_size));
    }
    const auto messages = renderer.log.messages();
    for (const std::string& m : messages) std::fprintf(stderr, "validation: %s\n", m.c_str());
    std::printf("%s on %s; validation %s, %zu messages\n", all_match ? "every frame matches the reference" :
                "MISMATCH against the reference", context.device_info().name.c_str(),
                renderer.validation ? "on" : "off", messages.size());
    return all_match && messages.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    int frames = 3;
    std::string out = "host_renderer_out";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--frames" && i + 1 < argc) frames = std::max(1, std::atoi(argv[++i]));
        else if (a == "--out" && i + 1 < argc) out = argv[++i];
        else {
            std::fprintf(stderr, "usage: host_renderer [--frames N] [--out DIR]\n");
            return 2;
        }
    }
    try {
        return run(frames, out);
    } catch (const Error& e) {
        std::fprintf(stderr, "host_renderer: %s\n", e.what());
        return 1;
    }
}
