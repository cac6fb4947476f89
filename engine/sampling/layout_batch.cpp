// Batches: one layout per image of a layered texture, padded to one patch count.
#include <algorithm>

#include "engine/error.h"
#include "engine/sampling/patch_layouts.h"

namespace tvlm {

PatchLayout batch_layouts(std::span<const PatchLayout> per_image, uint32_t min_patches_per_image) {
    if (per_image.empty()) throw Error("a batch needs at least one layout");
    const PatchLayout& first = per_image.front();
    PatchLayout batch{.kind = first.kind,
                      .width = first.width,
                      .height = first.height,
                      .patch_size = first.patch_size,
                      .images = uint32_t(per_image.size()),
                      .patches_per_image = min_patches_per_image,
                      .mode = first.mode};
    for (const PatchLayout& l : per_image) {
        if (l.width != first.width || l.height != first.height || l.patch_size != first.patch_size ||
            l.mode != first.mode || l.images != 1)
            throw Error("layouts of one batch must share image size, patch size and sampling mode");
        batch.patches_per_image = std::max(batch.patches_per_image, l.patches_per_image);
        batch.levels_needed = std::max(batch.levels_needed, l.levels_needed);
        if (l.kind != first.kind) batch.kind = "mixed";
    }
    for (uint32_t b = 0; b < per_image.size(); ++b) {
        for (Patch patch : per_image[b].patches) {
            patch.layer = b;
            batch.patches.push_back(patch);
        }
        for (uint32_t pad = per_image[b].patches_per_image; pad < batch.patches_per_image; ++pad)
            batch.patches.push_back({.level = -1.0f, .axis_x = 1.0f, .layer = b});
    }
    return batch;
}

}  // namespace tvlm
