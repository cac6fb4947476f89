#include "examples/host_renderer/renderer.h"

#include <string_view>

#include "engine/core/barriers.h"
#include "engine/error.h"
#include "engine/core/instance.h"
#include "engine/core/loader.h"
#include "engine/core/vk_check.h"

namespace tvlm::shaders {
std::span<const uint32_t> scene_vert();
std::span<const uint32_t> scene_frag();
}  // namespace tvlm::shaders

namespace example {

using namespace tvlm;

namespace {
constexpr VkFormat kFormat = VK_FORMAT_R8G8B8A8_UNORM;
// Rendered to, then read and written by texturevlm (sampled, storage, copies).
constexpr VkImageUsageFlags kUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_SAMPLED_BIT |
                                     VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                     VK_IMAGE_USAGE_TRANSFER_DST_BIT;
}  // namespace

Renderer::Renderer(uint32_t size) : validation_(validation_requested_by_env()), size_(size) {
    load_vulkan_loader();
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "host_renderer";
    app.apiVersion = VK_API_VERSION_1_3;
    const char* layer = "VK_LAYER_KHRONOS_validation";
    const char* debug = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkDebugUtilsMessengerCreateInfoEXT messenger_info = log_.messenger_info();
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, validation_ ? &messenger_info : nullptr};
    info.pApplicationInfo = &app;
    info.enabledLayerCount = validation_ ? 1 : 0;
    info.ppEnabledLayerNames = &layer;
    info.enabledExtensionCount = validation_ ? 1 : 0;
    info.ppEnabledExtensionNames = &debug;
    check_vk(vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");
    volkLoadInstance(instance_);
    if (validation_)
        check_vk(vkCreateDebugUtilsMessengerEXT(instance_, &messenger_info, nullptr, &messenger_),
                 "vkCreateDebugUtilsMessengerEXT");
    make_device();
    make_image();
    make_pipeline();
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = family_;
    check_vk(vkCreateCommandPool(device_, &pool_info, nullptr, &pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 2;
    check_vk(vkAllocateCommandBuffers(device_, &alloc, commands_), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    fence_info.flags = VK_FENCE_CREATE_SIGNALED_BIT;  // nothing to wait for before the first use
    for (VkFence& fence : fences_) check_vk(vkCreateFence(device_, &fence_info, nullptr, &fence), "vkCreateFence");
    // The hand-off semaphore: exportable where CUDA will wait on it and signal it.
    VkExportSemaphoreCreateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
    export_info.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, exportable_ ? &export_info : nullptr};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo semaphore_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
    check_vk(vkCreateSemaphore(device_, &semaphore_info, nullptr, &timeline_), "vkCreateSemaphore");
}

Renderer::~Renderer() {
    if (device_) vkDeviceWaitIdle(device_);
    vkDestroySemaphore(device_, timeline_, nullptr);
    for (VkFence fence : fences_) vkDestroyFence(device_, fence, nullptr);
    vkDestroyCommandPool(device_, pool_, nullptr);
    vkDestroyPipeline(device_, pipeline_, nullptr);
    vkDestroyPipelineLayout(device_, layout_, nullptr);
    vkDestroyImageView(device_, target_, nullptr);
    vkDestroyImage(device_, image_, nullptr);
    memory_ = DeviceMemory();
    vkDestroyDevice(device_, nullptr);
    if (messenger_) vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
    vkDestroyInstance(instance_, nullptr);
}

void Renderer::make_device() {
    uint32_t count = 1;
    vkEnumeratePhysicalDevices(instance_, &count, &physical_);
    if (!physical_) throw Error("no Vulkan device");
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
    std::vector<VkQueueFamilyProperties> props(families);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, props.data());
    const VkQueueFlags both = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
    while (family_ < families && (props[family_].queueFlags & both) != both) ++family_;
    if (family_ == families) throw Error("no queue family with graphics and compute");
    // What texturevlm needs (with CUDA's export extensions where the device has them), and
    // what the renderer wants itself (dynamic rendering), enabled together.
    wanted_ = std::make_unique<DeviceRequirements>(physical_, true, true);
    wanted_->v13.dynamicRendering = VK_TRUE;
    std::size_t exports = 0;
    for (const char* e : wanted_->extensions)
        exports += std::string_view(e) == VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME ||
                   std::string_view(e) == VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME;
    exportable_ = exports == 2;
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = family_;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &wanted_->features};
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    device_info.enabledExtensionCount = static_cast<uint32_t>(wanted_->extensions.size());
    device_info.ppEnabledExtensionNames = wanted_->extensions.data();
    check_vk(vkCreateDevice(physical_, &device_info, nullptr, &device_), "vkCreateDevice");
    vkGetDeviceQueue(device_, family_, 0, &queue_);
}

void Renderer::make_image() {
    // Exportable memory, for CUDA to map zero-copy: the image says so at creation, and its
    // memory is one dedicated allocation made for export (docs/cpp.md).
    VkExternalMemoryImageCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO};
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, exportable_ ? &external : nullptr};
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = kFormat;
    info.extent = {size_, size_, 1};
    info.mipLevels = full_mip_count(size_, size_);
    info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = kUsage;
    check_vk(vkCreateImage(device_, &info, nullptr, &image_), "vkCreateImage");
    memory_ = allocate_image_memory(physical_, device_, image_, exportable_);
    VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = image_;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = kFormat;
    view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    check_vk(vkCreateImageView(device_, &view, nullptr, &target_), "vkCreateImageView");
}

VkShaderModule Renderer::module(std::span<const uint32_t> words) const {
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = words.size_bytes();
    info.pCode = words.data();
    VkShaderModule m = VK_NULL_HANDLE;
    check_vk(vkCreateShaderModule(device_, &info, nullptr, &m), "vkCreateShaderModule");
    return m;
}

void Renderer::make_pipeline() {
    VkPushConstantRange push{VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(float)};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    check_vk(vkCreatePipelineLayout(device_, &layout_info, nullptr, &layout_), "vkCreatePipelineLayout");
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
    blend_attachment.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT |
                                      VK_COLOR_COMPONENT_A_BIT;
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
    info.layout = layout_;
    const VkResult r = vkCreateGraphicsPipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline_);
    vkDestroyShaderModule(device_, vert, nullptr);
    vkDestroyShaderModule(device_, frag, nullptr);
    check_vk(r, "vkCreateGraphicsPipelines");
}

HostVulkan Renderer::objects() const { return wanted_->host(instance_, physical_, device_, family_); }

ApplicationImage Renderer::image() const {
    ApplicationImage a{device_, image_, TextureDesc::sampled_2d(size_, size_, Format::rgba8_unorm),
                       kUsage,  0,      VK_IMAGE_LAYOUT_UNDEFINED};
    if (exportable_) {
        a.exportable_memory = memory_.handle();
        a.memory_size = memory_.size();
    }
    return a;
}

void Renderer::draw(VkCommandBuffer cmd, Texture& frame, float time) const {
    record_barrier(
        cmd, {.image = image_, .old_layout = frame.layout(), .new_layout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL});
    frame.set_layout(VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL);
    VkRenderingAttachmentInfo color{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
    color.imageView = target_;
    color.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    color.clearValue.color = {{0.08f, 0.08f, 0.1f, 1.0f}};
    VkRenderingInfo rendering{VK_STRUCTURE_TYPE_RENDERING_INFO};
    rendering.renderArea = {{0, 0}, {size_, size_}};
    rendering.layerCount = 1;
    rendering.colorAttachmentCount = 1;
    rendering.pColorAttachments = &color;
    vkCmdBeginRendering(cmd, &rendering);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_);
    const VkViewport viewport{0, 0, float(size_), float(size_), 0, 1};
    const VkRect2D scissor{{0, 0}, {size_, size_}};
    vkCmdSetViewport(cmd, 0, 1, &viewport);
    vkCmdSetScissor(cmd, 0, 1, &scissor);
    vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(float), &time);
    vkCmdDraw(cmd, 27, 1, 0, 0);
    vkCmdEndRendering(cmd);
}

VkCommandBuffer Renderer::begin(uint32_t slot) {
    check_vk(vkWaitForFences(device_, 1, &fences_[slot], VK_TRUE, UINT64_MAX), "vkWaitForFences");
    check_vk(vkResetFences(device_, 1, &fences_[slot]), "vkResetFences");
    const VkCommandBuffer cmd = commands_[slot];
    check_vk(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check_vk(vkBeginCommandBuffer(cmd, &info), "vkBeginCommandBuffer");
    return cmd;
}

void Renderer::submit(uint32_t slot, TimelineStep wait, TimelineStep signal) {
    check_vk(vkEndCommandBuffer(commands_[slot]), "vkEndCommandBuffer");
    VkCommandBufferSubmitInfo command{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    command.commandBuffer = commands_[slot];
    VkSemaphoreSubmitInfo wait_info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    wait_info.semaphore = timeline_;
    wait_info.value = wait.value;
    wait_info.stageMask = wait.stages;
    VkSemaphoreSubmitInfo signal_info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    signal_info.semaphore = timeline_;
    signal_info.value = signal.value;
    signal_info.stageMask = signal.stages;
    VkSubmitInfo2 submit{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    submit.waitSemaphoreInfoCount = wait.value ? 1 : 0;
    submit.pWaitSemaphoreInfos = &wait_info;
    submit.commandBufferInfoCount = 1;
    submit.pCommandBufferInfos = &command;
    submit.signalSemaphoreInfoCount = signal.value ? 1 : 0;
    submit.pSignalSemaphoreInfos = &signal_info;
    check_vk(vkQueueSubmit2(queue_, 1, &submit, fences_[slot]), "vkQueueSubmit2");
}

void Renderer::wait_idle() const { check_vk(vkQueueWaitIdle(queue_), "vkQueueWaitIdle"); }

}  // namespace example
