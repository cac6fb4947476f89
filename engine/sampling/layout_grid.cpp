// Level grids and anisotropic grids: regular tilings of one mip level.
#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.h"
#include "engine/mips/mip_filter.h"
#include "engine/sampling/patch_layouts.h"

namespace tvlm {

namespace {

void check_level(uint32_t width, uint32_t height, uint32_t level) {
    const uint32_t levels = full_mip_count(width, height);
    if (level >= levels)
        throw Error("level " + std::to_string(level) + " does not exist: a " + std::to_string(width) + "x" +
                    std::to_string(height) + " image has levels 0 to " + std::to_string(levels - 1));
}

uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// Patches of tile_w x tile_h texels of `level`, row-major, P x P samples each.
PatchLayout tile_level(uint32_t width, uint32_t height, uint32_t patch_size, uint32_t level, uint32_t tile_w,
                       uint32_t tile_h) {
    const Extent2D e = level_extent(width, height, level);
    PatchLayout layout{.kind = "grid", .width = width, .height = height, .patch_size = patch_size};
    for (uint32_t b = 0; b < ceil_div(e.height, tile_h); ++b)
        for (uint32_t a = 0; a < ceil_div(e.width, tile_w); ++a)
            layout.patches.push_back({.cu = float((a * tile_w + tile_w / 2.0) / e.width),
                                      .cv = float((b * tile_h + tile_h / 2.0) / e.height),
                                      .su = float(double(tile_w) / e.width),
                                      .sv = float(double(tile_h) / e.height),
                                      .level = float(level),
                                      .axis_x = 1.0f,
                                      .axis_y = 0.0f,
                                      .layer = 0});
    layout.patches_per_image = static_cast<uint32_t>(layout.patches.size());
    layout.levels_needed = level + 1;
    return layout;
}

// Keeps the `count` patches nearest the fixation, nearest first (stable: ties row-major).
void keep_nearest(PatchLayout& layout, const Fixation& f, uint32_t count) {
    if (!(f.x >= 0 && f.x <= 1 && f.y >= 0 && f.y <= 1))  // also rejects NaN
        throw Error("fixation (" + std::to_string(f.x) + ", " + std::to_string(f.y) +
                    ") is outside the image: use normalized coordinates in [0,1]");
    const size_t tiles = layout.patches.size();
    if (count == 0 || count > tiles)
        throw Error("num_patches " + std::to_string(count) + " is out of range: the level has " +
                    std::to_string(tiles) + " anisotropic patches, ask for 1 to " + std::to_string(tiles));
    const auto distance = [&](const Patch& q) {
        return std::hypot((q.cu - f.x) * layout.width, (q.cv - f.y) * layout.height);
    };
    std::stable_sort(layout.patches.begin(), layout.patches.end(),
                     [&](const Patch& a, const Patch& b) { return distance(a) < distance(b); });
    layout.patches.resize(count);
    layout.patches_per_image = count;
}

}  // namespace

PatchLayout level_grid_layout(uint32_t width, uint32_t height, uint32_t patch_size, uint32_t level) {
    check_patch_geometry(width, height, patch_size);
    check_level(width, height, level);
    return tile_level(width, height, patch_size, level, patch_size, patch_size);
}

PatchLayout anisotropic_layout(uint32_t width, uint32_t height, const AnisotropicParams& params) {
    check_patch_geometry(width, height, params.patch_size);
    check_level(width, height, params.level);
    if (params.elongation < 1 || params.elongation > kMaxAnisotropy)
        throw Error("elongation " + std::to_string(params.elongation) +
                    " is out of range: use 1 to 16 (the texture units' largest anisotropy)");
    const uint32_t p = params.patch_size, e = params.elongation;
    PatchLayout layout = params.vertical ? tile_level(width, height, p, params.level, p, e * p)
                                         : tile_level(width, height, p, params.level, e * p, p);
    if (params.fixation) keep_nearest(layout, *params.fixation, params.count);
    else if (params.count) throw Error("a patch count for an anisotropic layout needs a fixation to count from");
    layout.kind = "anisotropic";
    layout.mode = SamplingMode::gradients;
    double max_lod = 0;
    for (Patch& patch : layout.patches) {
        // The level the texture unit will pick: recorded for the metadata.
        const GradientFootprint f = gradient_footprint(patch_gradients(patch, p, width, height), width, height);
        patch.level = float(std::max(0.0, f.lod));
        max_lod = std::max(max_lod, double(patch.level));
    }
    layout.levels_needed = std::min(static_cast<uint32_t>(std::ceil(max_lod)) + 1, full_mip_count(width, height));
    return layout;
}

}  // namespace tvlm
