#pragma once
// Fills levels 1.. of every layer from level 0, on the GPU.
#include <cstdint>

#include "mip_filter.h"

namespace tvlm {

class Context;
class Texture;

// Records and submits the chain; returns the timeline value at which it is complete
// (no host wait). blit: vkCmdBlitImage level by level; box: a compute shader per level.
// Throws Error, changing nothing, if the format cannot be filtered that way on the device.
uint64_t generate_mips(Context& context, Texture& texture, MipFilter filter);

uint64_t generate_mips_blit(Context& context, Texture& texture);
uint64_t generate_mips_box(Context& context, Texture& texture);

}  // namespace tvlm
