#pragma once
// The benchmarks' point-sampling job (shaders/point_samples.h: trilinear samples at hashed
// per-sample LODs) with Vulkan compute (shaders/sample_points.comp): textureLod through the
// patch samplers' trilinear sampler, a vec4 per sample, in sample order, into a
// caller-provided storage buffer. The CUDA twins are in cuda/sampling/texture_reads.h (texture
// unit) and cuda/sampling/patch_sampling.h (software filtering).
#include "shaders/point_samples.h"
#include "engine/core/sampler.h"
#include "engine/core/vulkan.h"

namespace tvlm {

class Context;
class Texture;

class VulkanPointSampler {
public:
    explicit VulkanPointSampler(Context& context);
    VulkanPointSampler(const VulkanPointSampler&) = delete;
    VulkanPointSampler& operator=(const VulkanPointSampler&) = delete;
    ~VulkanPointSampler();  // waits until no submitted work uses the sampler

    // Throws Error, recording nothing, for no samples, a max_lod that is not finite, negative
    // or beyond the texture's last level, an output that is not 16 bytes per sample, or a
    // format that cannot be filtered linearly.
    void check(const Texture& texture, const gpu::PointSampleParams& points, VkDeviceSize output_bytes) const;
    // Records the dispatch and the barriers around `output` (the texture in
    // SHADER_READ_ONLY_OPTIMAL, as the engine leaves it).
    void record(VkCommandBuffer cmd, Texture& texture, const gpu::PointSampleParams& points, VkBuffer output,
                VkDeviceSize offset, VkDeviceSize bytes);
    // Checks, records and submits; returns the timeline value after which `output` holds the samples.
    uint64_t sample(Texture& texture, const gpu::PointSampleParams& points, VkBuffer output, VkDeviceSize offset,
                    VkDeviceSize bytes);

private:
    Context& context_;
    Sampler sampler_;
    uint64_t last_use_ = 0;
};

}  // namespace tvlm
