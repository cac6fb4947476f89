#pragma once
// Fills levels 1.. of every layer from level 0, on the GPU.
#include <cstdint>
#include <string>

#include "engine/mips/box_filter.h"
#include "engine/textures/format.h"
#include "engine/core/vulkan.h"

#include "engine/mips/mip_filter.h"

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

// The same work recorded into `cmd`: a renderer's own command buffer (docs/cpp.md) or
// a benchmark's batch. The checks come first (box: SAMPLED + STORAGE usage, blit:
// TRANSFER_SRC + TRANSFER_DST), so a throw records nothing. The caller submits, on a queue of
// the context's device, and keeps the texture alive until the work completes.
// Before: nothing; the first barrier waits for all earlier commands' writes (srcStage
// ALL_COMMANDS, srcAccess MEMORY_WRITE) and moves the image from texture.layout(), which is
// updated as commands are recorded (record in execution order). After: every level in
// SHADER_READ_ONLY_OPTIMAL, its writes available to every later command. The first box chain
// of a context uploads the filter's 8 KiB sRGB table through texturevlm's own queue, once.
void record_mips(Context& context, VkCommandBuffer cmd, Texture& texture, MipFilter filter);
void record_mips_blit(Context& context, VkCommandBuffer cmd, Texture& texture);
void record_mips_box(Context& context, VkCommandBuffer cmd, Texture& texture);

// Why the box filter cannot run for `format` on this device (empty: it can).
std::string box_unsupported(const Context& context, Format format);
// box where the device runs it (it is the faster filter: docs/benchmarks.md), else blit.
MipFilter default_mip_filter(const Context& context, Format format);

// After `region` of level 0 changed, recomputes with the box filter only the texels of each
// level that depend on it (whole 32x32 tiles of the pass's first level); the result equals
// a full regeneration. Throws Error, changing nothing, for an empty or outside region.
uint64_t update_mips(Context& context, Texture& texture, const DirtyRegion& region);
void record_mips_update(Context& context, VkCommandBuffer cmd, Texture& texture, const DirtyRegion& region);

}  // namespace tvlm
