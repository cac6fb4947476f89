#include "engine/mips/generate_mips.h"

namespace tvlm {

uint64_t generate_mips(Context& context, Texture& texture, MipFilter filter) {
    return filter == MipFilter::blit ? generate_mips_blit(context, texture) : generate_mips_box(context, texture);
}

void record_mips(Context& context, VkCommandBuffer cmd, Texture& texture, MipFilter filter) {
    if (filter == MipFilter::blit) record_mips_blit(context, cmd, texture);
    else record_mips_box(context, cmd, texture);
}

}  // namespace tvlm
