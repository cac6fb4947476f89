#include "vulkan_patch_sampler.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "barriers.h"
#include "context.h"
#include "error.h"
#include "spirv.h"
#include "texture.h"

namespace tvlm {

namespace {

constexpr uint32_t kMaxGroups = 65535;  // per dispatch dimension, the minimum every device allows

uint64_t groups(const PatchLayout& layout) {
    return (layout.samples() + TVLM_SAMPLE_GROUP_SIZE - 1) / TVLM_SAMPLE_GROUP_SIZE;
}

}  // namespace

VulkanPatchSampler::VulkanPatchSampler(Context& context, PatchLayout layout, PatchOutput output)
    : context_(context), layout_(std::move(layout)), output_(output) {
    if (output_.channels != 3 && output_.channels != 4)
        throw Error("patches have 3 or 4 channels, not " + std::to_string(output_.channels));
    if (output_.half && !context.half_storage())
        throw Error(context.device_info().name + " cannot store 16-bit values from compute shaders "
                    "(storageBuffer16BitAccess): use float32 output");
    if (layout_.patches.empty()) throw Error("the layout has no patches");
    if (groups(layout_) > uint64_t{kMaxGroups} * kMaxGroups)
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
    const TextureDesc& desc = texture.desc();
    check_patch_target(layout_, output_, desc.width, desc.height, texture.levels(), desc.layers, output_bytes);
    VkFormatProperties props;
    const FormatInfo& format = format_info(desc.format);
    vkGetPhysicalDeviceFormatProperties(context_.physical_device(), format.vk_format, &props);
    if (!(props.optimalTilingFeatures & VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT))
        throw Error("format " + std::string(format.name) + " cannot be filtered linearly on " +
                    context_.device_info().name + ": use rgba8 or rgba16f");
}

void VulkanPatchSampler::record(VkCommandBuffer cmd, Texture& texture, VkBuffer output, VkDeviceSize offset,
                                VkDeviceSize bytes) {
    const ComputePipeline& pipeline = context_.pipeline(
        output_.half ? "sample_patches_f16" : "sample_patches_f32",
        {.spirv = output_.half ? shaders::sample_patches_f16() : shaders::sample_patches_f32(),
         .bindings = {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                      VK_DESCRIPTOR_TYPE_STORAGE_BUFFER},
         .push_constant_bytes = sizeof(gpu::PatchSampleParams)});
    const gpu::PatchSampleParams params{uint32_t(layout_.patches.size()), layout_.patch_size, output_.channels,
                                        layout_.mode == SamplingMode::gradients ? 1u : 0u, float(layout_.width),
                                        float(layout_.height), 0, 0};
    VkDescriptorImageInfo image{sampler_.handle(), texture.sampled_view(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    VkDescriptorBufferInfo patches{patches_.handle(), 0, VK_WHOLE_SIZE};
    VkDescriptorBufferInfo out{output, offset, bytes};
    std::array<VkWriteDescriptorSet, 3> writes{};
    for (uint32_t i = 0; i < 3; ++i) {
        writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = i == 0 ? VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    }
    writes[0].pImageInfo = &image;
    writes[1].pBufferInfo = &patches;
    writes[2].pBufferInfo = &out;

    const uint64_t total = groups(layout_);
    const auto x = uint32_t(std::min<uint64_t>(total, kMaxGroups));
    const auto y = uint32_t((total + x - 1) / x);
    // Earlier reads or writes of the output finish before this dispatch writes it.
    record_memory_barrier(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                          VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT,
                          VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
    pipeline.bind(cmd, writes, &params);
    vkCmdDispatch(cmd, x, y, 1);
    // The samples become visible to later commands and to the host.
    record_memory_barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                          VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_2_HOST_BIT,
                          VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_HOST_READ_BIT);
}

uint64_t VulkanPatchSampler::sample(Texture& texture, VkBuffer output, VkDeviceSize offset, VkDeviceSize bytes) {
    check(texture, bytes);
    const uint64_t done = context_.queue().submit([&](VkCommandBuffer cmd) { record(cmd, texture, output, offset, bytes); });
    texture.mark_used(done);
    last_use_ = done;
    return done;
}

}  // namespace tvlm
