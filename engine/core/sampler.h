#pragma once
// Move-only owner of a VkSampler.
#include "engine/core/vulkan.h"

namespace tvlm {

class Sampler {
public:
    Sampler() = default;
    // Linear within and between levels, clamp to edge, normalized coordinates, anisotropy
    // up to `max_anisotropy` where the device supports it (1 = isotropic): what the patch
    // samplers use, the same filter as the CUDA texture objects.
    static Sampler trilinear(VkDevice device, float max_anisotropy);
    Sampler(Sampler&& other) noexcept;
    Sampler& operator=(Sampler&& other) noexcept;
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;
    ~Sampler();

    VkSampler handle() const { return sampler_; }

private:
    void destroy();
    VkDevice device_ = VK_NULL_HANDLE;
    VkSampler sampler_ = VK_NULL_HANDLE;
};

}  // namespace tvlm
