#include "engine/sampling/vulkan_point_sampler.h"

#include <array>
#include <cmath>
#include <string>

#include "engine/core/barriers.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "shaders/spirv.h"
#include "engine/textures/texture.h"
#include "engine/sampling/vulkan_patch_sampler.h"

namespace tvlm {

VulkanPointSampler::VulkanPointSampler(Context& context)
    : context_(context), sampler_(Sampler::trilinear(context.device(), 1.0f)) {}

VulkanPointSampler::~VulkanPointSampler() {
    try {
        context_.queue().wait(last_use_);
    } catch (...) {  // a lost device: nothing left to wait for
    }
}

void VulkanPointSampler::check(const Texture& texture, const gpu::PointSampleParams& points,
                               VkDeviceSize output_bytes) const {
    if (points.count == 0) throw Error("no samples asked for: give a count of at least 1");
    // (A uint32 count needs at most 2^32 / TVLM_POINT_GROUP_SIZE workgroups: one dispatch.)
    const float last_level = float(texture.levels() - 1);
    if (!std::isfinite(points.max_lod) || points.max_lod < 0.0f || points.max_lod > last_level)
        throw Error("max_lod " + std::to_string(points.max_lod) + " is outside the texture's levels [0, " +
                    std::to_string(texture.levels() - 1) + "]: generate the mip chain or lower max_lod");
    if (output_bytes != VkDeviceSize{16} * points.count)
        throw Error("the output holds " + std::to_string(output_bytes) + " bytes; " + std::to_string(points.count) +
                    " samples need " + std::to_string(VkDeviceSize{16} * points.count) + " (a vec4 each)");
    check_linear_filtering(context_, texture.desc().format);
}

void VulkanPointSampler::record(VkCommandBuffer cmd, Texture& texture, const gpu::PointSampleParams& points,
                                VkBuffer output, VkDeviceSize offset, VkDeviceSize bytes) {
    const ComputePipeline& pipeline = context_.pipeline(
        "sample_points", {.spirv = shaders::sample_points(),
                          .bindings = {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER},
                          .push_constant_bytes = sizeof(gpu::PointSampleParams)});
    VkDescriptorImageInfo image{sampler_.handle(), texture.sampled_view(), VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    VkDescriptorBufferInfo out{output, offset, bytes};
    const std::array<VkWriteDescriptorSet, 2> writes{sampled_image_write(0, &image), storage_buffer_write(1, &out)};
    const DispatchGrid grid = dispatch_grid((uint64_t{points.count} + TVLM_POINT_GROUP_SIZE - 1) /
                                            TVLM_POINT_GROUP_SIZE);
    record_compute_output_before(cmd);
    pipeline.bind(cmd, writes, &points);
    vkCmdDispatch(cmd, grid.x, grid.y, 1);
    record_compute_output_after(cmd);
}

uint64_t VulkanPointSampler::sample(Texture& texture, const gpu::PointSampleParams& points, VkBuffer output,
                                    VkDeviceSize offset, VkDeviceSize bytes) {
    check(texture, points, bytes);
    const uint64_t done = context_.queue().submit(
        [&](VkCommandBuffer cmd) { record(cmd, texture, points, output, offset, bytes); });
    texture.mark_used(done);
    last_use_ = done;
    return done;
}

}  // namespace tvlm
