#include "generate_mips.h"

namespace tvlm {

uint64_t generate_mips(Context& context, Texture& texture, MipFilter filter) {
    return filter == MipFilter::blit ? generate_mips_blit(context, texture) : generate_mips_box(context, texture);
}

}  // namespace tvlm
