#pragma once
// Move-only owner of a compute pipeline built from embedded SPIR-V, with a push-descriptor
// set layout (bindings are pushed at record time: no descriptor pools) and push constants.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/vk_handle.h"

namespace tvlm {

struct ComputePipelineDesc {
    std::span<const uint32_t> spirv;
    std::vector<VkDescriptorType> bindings;  // binding i has type bindings[i]
    uint32_t push_constant_bytes = 0;
    // Every subgroup full (VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT): for
    // shaders that derive an invocation's place from its subgroup (Context::subgroup_shuffles).
    bool full_subgroups = false;
};

// Workgroups laid out 2D, x at most 65535 (what every device allows per dimension), so that
// more groups fit one dispatch; shaders index group gl_WorkGroupID.y * x + gl_WorkGroupID.x.
// Throws Error beyond kMaxWorkgroups.
inline constexpr uint64_t kMaxWorkgroups = uint64_t{65535} * 65535;
struct DispatchGrid {
    uint32_t x = 0, y = 0;
};
DispatchGrid dispatch_grid(uint64_t groups);

// One pushed descriptor at `binding`: `image` for image types, `buffer` for buffer types;
// and the two kinds the samplers push.
VkWriteDescriptorSet descriptor_write(uint32_t binding, VkDescriptorType type, const VkDescriptorImageInfo* image,
                                      const VkDescriptorBufferInfo* buffer);
VkWriteDescriptorSet sampled_image_write(uint32_t binding, const VkDescriptorImageInfo* image);
VkWriteDescriptorSet storage_buffer_write(uint32_t binding, const VkDescriptorBufferInfo* buffer);

class ComputePipeline {
public:
    ComputePipeline(VkDevice device, const ComputePipelineDesc& desc);

    VkPipeline pipeline() const { return pipeline_.get(); }
    VkPipelineLayout layout() const { return layout_.get(); }

    // Binds the pipeline and pushes the descriptors (one VkWriteDescriptorSet per binding,
    // dstBinding set) and the push constants.
    void bind(VkCommandBuffer cmd, std::span<const VkWriteDescriptorSet> writes, const void* push_constants) const;

private:
    // In the order they are made: destroyed pipeline first.
    VkDescriptorSetLayoutHandle set_layout_;
    VkPipelineLayoutHandle layout_;
    VkPipelineHandle pipeline_;
    uint32_t push_constant_bytes_ = 0;
};

}  // namespace tvlm
