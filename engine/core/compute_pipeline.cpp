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
    : device_(device), push_constant_bytes_(desc.push_constant_bytes) {
    VkShaderModule module = VK_NULL_HANDLE;
    try {
        std::vector<VkDescriptorSetLayoutBinding> bindings;
        for (uint32_t i = 0; i < desc.bindings.size(); ++i)
            bindings.push_back({i, desc.bindings[i], 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
        VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        set_info.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
        set_info.bindingCount = static_cast<uint32_t>(bindings.size());
        set_info.pBindings = bindings.data();
        check_vk(vkCreateDescriptorSetLayout(device_, &set_info, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");

        VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, desc.push_constant_bytes};
        VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        layout_info.setLayoutCount = 1;
        layout_info.pSetLayouts = &set_layout_;
        layout_info.pushConstantRangeCount = desc.push_constant_bytes ? 1 : 0;
        layout_info.pPushConstantRanges = &range;
        check_vk(vkCreatePipelineLayout(device_, &layout_info, nullptr, &layout_), "vkCreatePipelineLayout");

        VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        module_info.codeSize = desc.spirv.size_bytes();
        module_info.pCode = desc.spirv.data();
        check_vk(vkCreateShaderModule(device_, &module_info, nullptr, &module), "vkCreateShaderModule");

        VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        info.stage.module = module;
        info.stage.pName = "main";
        if (desc.full_subgroups) info.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
        info.layout = layout_;
        check_vk(vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline_),
                 "vkCreateComputePipelines");
        vkDestroyShaderModule(device_, module, nullptr);  // the pipeline keeps what it needs
    } catch (...) {
        if (module) vkDestroyShaderModule(device_, module, nullptr);
        destroy();
        throw;
    }
}

ComputePipeline::ComputePipeline(ComputePipeline&& o) noexcept
    : device_(o.device_),
      set_layout_(std::exchange(o.set_layout_, VK_NULL_HANDLE)),
      layout_(std::exchange(o.layout_, VK_NULL_HANDLE)),
      pipeline_(std::exchange(o.pipeline_, VK_NULL_HANDLE)),
      push_constant_bytes_(o.push_constant_bytes_) {}

ComputePipeline::~ComputePipeline() { destroy(); }

void ComputePipeline::destroy() {
    if (pipeline_) vkDestroyPipeline(device_, pipeline_, nullptr);
    if (layout_) vkDestroyPipelineLayout(device_, layout_, nullptr);
    if (set_layout_) vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
    pipeline_ = VK_NULL_HANDLE;
    layout_ = VK_NULL_HANDLE;
    set_layout_ = VK_NULL_HANDLE;
}

void ComputePipeline::bind(VkCommandBuffer cmd, std::span<const VkWriteDescriptorSet> writes,
                           const void* push_constants) const {
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
    vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, static_cast<uint32_t>(writes.size()),
                              writes.data());
    if (push_constant_bytes_)
        vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_constant_bytes_, push_constants);
}

}  // namespace tvlm
