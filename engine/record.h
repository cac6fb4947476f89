#pragma once
// Recording texturevlm's GPU work into the application's own command buffers (a renderer's
// frame), instead of texturevlm's queue. Each function only records into `cmd`; nothing is
// submitted or waited for. The application submits `cmd` on a queue of the context's device
// and keeps every object a call names (texture, staging, sampler, output buffer) alive until
// that submission completes. Texture::layout() is updated as commands are recorded, so
// record in the order the command buffers will execute.
//
// Each declaration says what the recorded commands need before them and leave after them.
// Every call starts with a barrier that waits for all earlier commands of the queue
// (srcStage ALL_COMMANDS, srcAccess MEMORY_WRITE) and moves the image from texture.layout():
// nothing needs to be recorded before it, whatever wrote the image (a render pass, a copy).
#include <vulkan/vulkan_core.h>

#include "context.h"
#include "mip_filter.h"
#include "texture.h"
#include "transfer.h"
#include "vulkan_patch_sampler.h"

namespace tvlm {

// Levels 1.. of the whole texture from level 0 (box: compute; blit: vkCmdBlitImage). The
// first box chain recorded for a context uploads the filter's 8 KiB sRGB table through
// texturevlm's own submission, once (a host wait; record one chain at set-up to keep it out
// of the frame loop).
// Needs: box SAMPLED + STORAGE usage, blit TRANSFER_SRC + TRANSFER_DST (checked first:
// Error, nothing recorded).
// Before: nothing. After: every level in SHADER_READ_ONLY_OPTIMAL, its writes available to
// every later command (dstStage ALL_COMMANDS, dstAccess MEMORY_READ | MEMORY_WRITE).
void record_mip_chain(Context& context, VkCommandBuffer cmd, Texture& texture, MipFilter filter);

// record_upload (transfer.h): a staging buffer's texels into one level and layer.

// The sampler's patches of `texture` into `output` [offset, offset + bytes).
// Needs SAMPLED usage and the sampler's layout to fit the texture (checked first).
// Before: nothing (the image moves to SHADER_READ_ONLY_OPTIMAL if it is not there; earlier
// reads and writes of `output` are waited for). After: the output's writes available to
// every later command and to the host (dstStage ALL_COMMANDS | HOST).
void record_patch_sampling(VkCommandBuffer cmd, VulkanPatchSampler& sampler, Texture& texture, VkBuffer output,
                           VkDeviceSize offset, VkDeviceSize bytes);

}  // namespace tvlm
