#pragma once
// Move-only owner of a VkSampler.
#include "engine/core/vk_handle.h"

namespace tvlm {

class Sampler {
public:
    Sampler() = default;
    // Linear within and between levels, clamp to edge, normalized coordinates, anisotropy
    // up to `max_anisotropy` where the device supports it (1 = isotropic): what the patch
    // samplers use, the same filter as the CUDA texture objects.
    static Sampler trilinear(VkDevice device, float max_anisotropy);

    VkSampler handle() const { return sampler_.get(); }

private:
    VkSamplerHandle sampler_;
};

}  // namespace tvlm
