#include "engine/core/compute_pipeline.h"

#include <algorithm>
#include <utility>

#include "engine/error.h"
#include "engine/core/vk_check.h"

namespace tvlm {

VkWriteDescriptorSet descriptor_write(uint32_t binding, VkDescriptorType type, const VkDescriptorImageInfo* image,
                                      const VkDescriptorBufferInfo* buffer) {
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstBinding = binding;
    write.descriptorCount = 1;
    write.descriptorType = type;
    write.pImageInfo = image;
    write.pBufferInfo = buffer;
    return write;
}

VkWriteDescriptorSet sampled_image_write(uint32_t binding, const VkDescriptorImageInfo* image) {
    return descriptor_write(binding, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, image, nullptr);
}

VkWriteDescriptorSet storage_buffer_write(uint32_t binding, const VkDescriptorBufferInfo* buffer) {
    return descriptor_write(binding, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, nullptr, buffer);
}

DispatchGrid dispatch_grid(uint64_t groups) {
    if (groups > kMaxWorkgroups) throw Error("too many workgroups for one dispatch: split the work");
    const auto x = uint32_t(std::min(groups, uint64_t{65535}));
    return {x, x == 0 ? 0 : uint32_t((groups + x - 1) / x)};
}

ComputePipeline::ComputePipeline(VkDevice device, const ComputePipelineDesc& desc)
    : push_constant_bytes_(desc.push_constant_bytes) {
    std::vector<VkDescriptorSetLayoutBinding> bindings;
    for (uint32_t i = 0; i < desc.bindings.size(); ++i)
        bindings.push_back({i, desc.bindings[i], 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
    set_info.bindingCount = static_cast<uint32_t>(bindings.size());
    set_info.pBindings = bindings.data();
    check_vk(vkCreateDescriptorSetLayout(device, &set_info, nullptr, set_layout_.create(device)),
             "vkCreateDescriptorSetLayout");

    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, desc.push_constant_bytes};
    const VkDescriptorSetLayout set_layout = set_layout_.get();
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = desc.push_constant_bytes ? 1 : 0;
    layout_info.pPushConstantRanges = &range;
    check_vk(vkCreatePipelineLayout(device, &layout_info, nullptr, layout_.create(device)), "vkCreatePipelineLayout");

    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = desc.spirv.size_bytes();
    module_info.pCode = desc.spirv.data();
    VkShaderModuleHandle module;  // the pipeline keeps what it needs of it
    check_vk(vkCreateShaderModule(device, &module_info, nullptr, module.create(device)), "vkCreateShaderModule");

    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module.get();
    info.stage.pName = "main";
    if (desc.full_subgroups) info.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    info.layout = layout_.get();
    check_vk(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, pipeline_.create(device)),
             "vkCreateComputePipelines");
}

void ComputePipeline::bind(VkCommandBuffer cmd, std::span<const VkWriteDescriptorSet> writes,
                           const void* push_constants) const {
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_.get());
    vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout_.get(), 0,
                              static_cast<uint32_t>(writes.size()), writes.data());
    if (push_constant_bytes_)
        vkCmdPushConstants(cmd, layout_.get(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_constant_bytes_, push_constants);
}

}  // namespace tvlm
