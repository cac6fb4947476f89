#pragma once
// Fills levels 1.. of every layer from level 0, on the GPU.
#include <cstdint>
#include <string>

#include "format.h"

#include "mip_filter.h"

namespace tvlm {

class Context;
class Texture;

// Records and submits the chain; returns the timeline value at which it is complete
// (no host wait). blit: vkCmdBlitImage level by level; box: the single-pass compute
// downsampler, a few dispatches per chain. Throws Error, changing nothing, if the format
// cannot be filtered that way on the device.
uint64_t generate_mips(Context& context, Texture& texture, MipFilter filter);

uint64_t generate_mips_blit(Context& context, Texture& texture);
uint64_t generate_mips_box(Context& context, Texture& texture);

// Why the box filter cannot run for `format` on this device (empty: it can).
std::string box_unsupported(const Context& context, Format format);
// box where the device runs it (it is the faster filter: docs/benchmarks.md), else blit.
MipFilter default_mip_filter(const Context& context, Format format);
// How the box shader averages and rounds `format` (TVLM_BOX_* in shader_params.h).
uint32_t box_kind(Format format);

// A rectangle of level 0, in some layers, whose texels changed.
struct DirtyRegion {
    uint32_t x = 0, y = 0, width = 0, height = 0;
    uint32_t first_layer = 0, layers = 1;
};

// After `region` of level 0 changed, recomputes with the box filter only the texels of each
// level that depend on it (whole 32x32 tiles of the pass's first level); the result equals
// a full regeneration. Throws Error, changing nothing, for an empty or outside region.
uint64_t update_mips(Context& context, Texture& texture, const DirtyRegion& region);

}  // namespace tvlm
