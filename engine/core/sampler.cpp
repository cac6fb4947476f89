#include "engine/core/sampler.h"

#include "engine/core/vk_check.h"

namespace tvlm {

Sampler Sampler::trilinear(VkDevice device, float max_anisotropy) {
    VkSamplerCreateInfo info{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    info.magFilter = info.minFilter = VK_FILTER_LINEAR;
    info.mipmapMode = VK_SAMPLER_MIPMAP_MODE_LINEAR;
    info.addressModeU = info.addressModeV = info.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    info.anisotropyEnable = max_anisotropy > 1.0f ? VK_TRUE : VK_FALSE;
    info.maxAnisotropy = max_anisotropy;
    info.minLod = 0.0f;
    info.maxLod = VK_LOD_CLAMP_NONE;
    Sampler sampler;
    check_vk(vkCreateSampler(device, &info, nullptr, sampler.sampler_.create(device)), "vkCreateSampler");
    return sampler;
}

}  // namespace tvlm
