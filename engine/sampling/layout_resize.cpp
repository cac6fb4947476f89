// The resize layout: output pixels of a resized (and cropped) image as patch samples.
#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.h"
#include "engine/mips/mip_filter.h"
#include "engine/sampling/patch_layouts.h"

namespace tvlm {

PatchLayout resize_layout(uint32_t width, uint32_t height, const ResizeWindow& w) {
    check_patch_geometry(width, height, w.patch_size);
    const auto size = [](uint32_t a, uint32_t b) { return std::to_string(a) + "x" + std::to_string(b); };
    if (w.width == 0 || w.height == 0 || uint64_t{w.x} + w.width > w.resized_width ||
        uint64_t{w.y} + w.height > w.resized_height)
        throw Error("the window " + size(w.width, w.height) + " at (" + std::to_string(w.x) + ", " +
                    std::to_string(w.y) + ") is empty or outside the resized " +
                    size(w.resized_width, w.resized_height) + " image");
    const uint32_t p = w.patch_size;
    if (w.width % p || w.height % p)
        throw Error("patch size " + std::to_string(p) + " does not divide the window " + size(w.width, w.height) +
                    ": pick a common divisor of its sides");
    PatchLayout layout{
        .kind = "resize", .width = width, .height = height, .patch_size = p, .mode = SamplingMode::gradients};
    const double rw = w.resized_width, rh = w.resized_height;
    double max_lod = 0;
    for (uint32_t b = 0; b < w.height / p; ++b)
        for (uint32_t a = 0; a < w.width / p; ++a) {
            Patch patch{.cu = float((w.x + a * p + p / 2.0) / rw),
                        .cv = float((w.y + b * p + p / 2.0) / rh),
                        .su = float(p / rw),
                        .sv = float(p / rh),
                        .level = 0,
                        .axis_x = 1.0f,
                        .axis_y = 0.0f,
                        .layer = 0};
            const GradientFootprint f = gradient_footprint(patch_gradients(patch, p, width, height), width, height);
            patch.level = float(std::max(0.0, f.lod));  // the level the texture unit picks, for the metadata
            max_lod = std::max(max_lod, double(patch.level));
            layout.patches.push_back(patch);
        }
    layout.patches_per_image = static_cast<uint32_t>(layout.patches.size());
    // A level only float noise above an integer (scale 2^k) reads the next level with a
    // weight of ~1e-7: that level is not needed.
    const auto top = static_cast<uint32_t>(std::ceil(std::max(0.0, max_lod - TVLM_RATIO_SLACK)));
    layout.levels_needed = std::min(top + 1, full_mip_count(width, height));
    return layout;
}

}  // namespace tvlm
