#include "engine/sampling/vulkan_patch_sampler.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "engine/core/barriers.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "shaders/spirv.h"
#include "engine/textures/texture.h"

namespace tvlm {

namespace {

uint64_t groups(const PatchLayout& layout) {
    return (layout.samples() + TVLM_SAMPLE_GROUP_SIZE - 1) / TVLM_SAMPLE_GROUP_SIZE;
}

}  // namespace

void check_linear_filtering(const Context& context, Format format) {
    VkFormatProperties props;
    const FormatInfo& info = format_info(format);
    vkGetPhysicalDeviceFormatProperties(context.physical_device(), vk_format(format), &props);
    if (!(props.optimalTilingFeatures & VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT))
        throw Error("format " + std::string(info.name) + " cannot be filtered linearly on " +
                    context.device_info().name + ": use rgba8 or rgba16f");
}

VulkanPatchSampler::VulkanPatchSampler(Context& context, PatchLayout layout, PatchOutput output)
    : context_(context), layout_(std::move(layout)), output_(output) {
    if (output_.channels != 3 && output_.channels != 4)
        throw Error("patches have 3 or 4 channels, not " + std::to_string(output_.channels));
    if (output_.half && !context.half_storage())
        throw Error(context.device_info().name +
                    " cannot store 16-bit values from compute shaders "
                    "(storageBuffer16BitAccess): use float32 output");
    if (layout_.patches.empty()) throw Error("the layout has no patches");
    // The shader's sample index is 32-bit (which also keeps the workgroups under kMaxWorkgroups).
    if (layout_.samples() > UINT32_MAX)
        throw Error("the layout has too many samples for one dispatch: split the batch");
    patches_ = HostBuffer(context.physical_device(), context.device(), layout_.patches.size() * sizeof(Patch),
                          VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    std::memcpy(patches_.data(), layout_.patches.data(), layout_.patches.size() * sizeof(Patch));
    // An explicit LOD has no footprint to be anisotropic about: level sampling is isotropic.
    // Without working anisotropy (context.h), gradients still pick the level, isotropically.
    if (layout_.mode == SamplingMode::gradients && context.anisotropy())
        max_anisotropy_ = std::min(kMaxAnisotropy, uint32_t(context.limits().maxSamplerAnisotropy));
    sampler_ = Sampler::trilinear(context.device(), float(max_anisotropy_));
}

VulkanPatchSampler::~VulkanPatchSampler() {
    try {
        context_.queue().wait(last_use_);
    } catch (...) {  // a lost device: nothing left to wait for
    }
}

void VulkanPatchSampler::check(const Texture& texture, VkDeviceSize output_bytes) const {
    texture.require_usage(VK_IMAGE_USAGE_SAMPLED_BIT, "patch sampling");
    const TextureDesc& desc = texture.desc();
    check_patch_target(layout_, output_, desc.width, desc.height, texture.levels(), desc.layers, output_bytes);
    check_linear_filtering(context_, desc.format);
}

void VulkanPatchSampler::record(VkCommandBuffer cmd, Texture& texture, VkBuffer output, VkDeviceSize offset,
                                VkDeviceSize bytes) {
    check(texture, bytes);
    record_checked(cmd, texture, output, offset, bytes);
}

void VulkanPatchSampler::record_checked(VkCommandBuffer cmd, Texture& texture, VkBuffer output, VkDeviceSize offset,
                                        VkDeviceSize bytes) {
    if (texture.layout() != VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL) {
        record_barrier(cmd, {.image = texture.image(),
                             .old_layout = texture.layout(),
                             .new_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL});
        texture.set_layout(VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
    }
    const ComputePipeline& pipeline = context_.pipeline(
        output_.half ? "sample_patches_f16" : "sample_patches_f32",
        {.spirv = output_.half ? shaders::sample_patches_f16() : shaders::sample_patches_f32(),
         .bindings = {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                      VK_DESCRIPTOR_TYPE_STORAGE_BUFFER},
         .push_constant_bytes = sizeof(gpu::PatchSampleParams)});
    const gpu::PatchSampleParams params{uint32_t(layout_.patches.size()),
                                        layout_.patch_size,
                                        output_.channels,
                                        layout_.mode == SamplingMode::gradients ? 1u : 0u,
                                        float(layout_.width),
                                        float(layout_.height),
                                        gpu::make_divisor(layout_.patch_size * layout_.patch_size),
                                        gpu::make_divisor(layout_.patch_size)};
    VkDescriptorImageInfo image{sampler_.handle(), texture.sampled_view(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    VkDescriptorBufferInfo patches{patches_.handle(), 0, VK_WHOLE_SIZE};
    VkDescriptorBufferInfo out{output, offset, bytes};
    const std::array<VkWriteDescriptorSet, 3> writes{sampled_image_write(0, &image), storage_buffer_write(1, &patches),
                                                     storage_buffer_write(2, &out)};

    const DispatchGrid grid = dispatch_grid(groups(layout_));
    record_compute_output_before(cmd);
    pipeline.bind(cmd, writes, &params);
    vkCmdDispatch(cmd, grid.x, grid.y, 1);
    record_compute_output_after(cmd);
}

uint64_t VulkanPatchSampler::sample(Texture& texture, VkBuffer output, VkDeviceSize offset, VkDeviceSize bytes) {
    check(texture, bytes);
    const uint64_t done = context_.queue().submit(
        [&](VkCommandBuffer cmd) { record_checked(cmd, texture, output, offset, bytes); });
    texture.mark_used(done);
    last_use_ = done;
    return done;
}

}  // namespace tvlm
