#include "record.h"

#include "barriers.h"
#include "generate_mips.h"

namespace tvlm {

void record_mip_chain(Context& context, VkCommandBuffer cmd, Texture& texture, MipFilter filter) {
    record_mips(context, cmd, texture, filter);  // checks the filter's usage bits before recording
}

void record_patch_sampling(VkCommandBuffer cmd, VulkanPatchSampler& sampler, Texture& texture, VkBuffer output,
                           VkDeviceSize offset, VkDeviceSize bytes) {
    sampler.check(texture, bytes);
    if (texture.layout() != VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL) {
        record_barrier(cmd, {.image = texture.image(), .old_layout = texture.layout(),
                             .new_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL});
        texture.set_layout(VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
    }
    sampler.record(cmd, texture, output, offset, bytes);
}

}  // namespace tvlm
