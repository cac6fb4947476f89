#pragma once
// Patch sampling with Vulkan compute (shaders/sample_patches.glsl): textureLod / textureGrad
// through a trilinear, 16x anisotropic sampler, all patches of a batch in one dispatch,
// into a caller-provided storage buffer [B, N, C, P, P]. Runs on any Vulkan 1.3 device,
// lavapipe included.
#include <cstdint>

#include "engine/textures/format.h"
#include "engine/core/host_buffer.h"
#include "engine/sampling/patch.h"
#include "engine/core/sampler.h"
#include "engine/core/vulkan.h"

namespace tvlm {

class Context;
class Texture;

// Throws Error saying what to use when `format` cannot be filtered linearly on the device.
void check_linear_filtering(const Context& context, Format format);

class VulkanPatchSampler {
public:
    // Uploads `layout` once (a host-visible storage buffer, read in place) and builds the
    // pipeline. Throws Error for float16 output on a device without 16-bit storage.
    VulkanPatchSampler(Context& context, PatchLayout layout, PatchOutput output = {});
    VulkanPatchSampler(const VulkanPatchSampler&) = delete;
    VulkanPatchSampler& operator=(const VulkanPatchSampler&) = delete;
    ~VulkanPatchSampler();  // waits until no submitted work reads the layout buffer

    // Throws Error, recording nothing, when `texture` is not the layout's size, lacks the
    // levels or layers the layout needs or cannot be filtered linearly, or when
    // `output_bytes` is not the output's exact size.
    void check(const Texture& texture, VkDeviceSize output_bytes) const;
    // Records the sampling into `cmd` (a renderer's own command buffer, docs/cpp.md, or
    // a batch): check() first, so a throw records nothing. The caller submits and keeps the
    // sampler, texture and output alive until the work completes.
    // Before: nothing; where texture.layout() is not SHADER_READ_ONLY_OPTIMAL, a barrier after
    // all earlier commands moves it there; earlier reads and writes of `output` are waited
    // for. After: the output's writes available to every later command and to the host.
    void record(VkCommandBuffer cmd, Texture& texture, VkBuffer output, VkDeviceSize offset, VkDeviceSize bytes);
    // Checks, records and submits. Returns the timeline value after which `output` holds
    // the samples (host-visible buffers included).
    uint64_t sample(Texture& texture, VkBuffer output, VkDeviceSize offset, VkDeviceSize bytes);

    const PatchLayout& layout() const { return layout_; }
    const PatchOutput& output() const { return output_; }
    // The sampler's anisotropy: 16 for gradient layouts where the device filters
    // anisotropically, else 1 (what reference_sample_patches() must be told).
    uint32_t max_anisotropy() const { return max_anisotropy_; }

private:
    void record_checked(VkCommandBuffer cmd, Texture& texture, VkBuffer output, VkDeviceSize offset,
                        VkDeviceSize bytes);
    Context& context_;
    PatchLayout layout_;
    PatchOutput output_;
    HostBuffer patches_;
    Sampler sampler_;
    uint32_t max_anisotropy_ = 1;
    uint64_t last_use_ = 0;
};

}  // namespace tvlm
