#pragma once
// The layouts: host code, computed once per image size and parameters, then uploaded.
// Each throws Error, computing nothing, for a patch size outside [1, 64], an empty image,
// a level the image does not have, a fixation that is NaN or outside [0,1]^2, or a budget
// below the minimum the image needs.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/sampling/patch.h"

namespace tvlm {

// The image at mip level `level` (size max(1, W>>l) x max(1, H>>l)) cut into P x P patches
// of that level's texels, row-major: a ViT patchify of the downsampled image. Sample
// (j, k) of patch (a, b) reads texel (a*P + j, b*P + k) of the level exactly at its centre.
// Partial patches at the right and bottom edges keep the full P x P spacing; their samples
// past the edge repeat the edge texels (clamp to edge), so every patch has one spacing.
PatchLayout level_grid_layout(uint32_t width, uint32_t height, uint32_t patch_size, uint32_t level);

struct Fixation {
    double x = 0.5, y = 0.5;  // normalized image coordinates, [0,1]^2
};

// Cortical magnification M(e) = m0 / (e + e0), e the distance to the nearest fixation in
// units of the image's longer side. The level a point wants is
// D(e) = clamp(-log2 M(e) + bias, 0, root level).
struct FoveatedParams {
    std::vector<Fixation> fixations = std::vector<Fixation>(1);  // the centre
    uint32_t budget = 273;                                       // at most this many patches
    uint32_t patch_size = 16;
    double m0 = 0.05;  // M(0) = 1: the fixation wants level 0, e = 0.15 level 2
    double e0 = 0.05;
    double bias = 0.0;  // with m0, shifts D(e); the budget usually binds first
    // Keep splitting past the magnification rule, most wanted cell first, while a split
    // fits the budget: what a vision encoder built for `budget` tokens wants (the Python
    // API). Without it refinement stops where the rule is satisfied.
    bool fill_budget = false;
};

// A quadtree of square cells refined toward the fixations, clipped to the image: a cell of
// level L is P * 2^L texels wide and becomes one patch sampled at LOD log2(extent / P).
// Root cells have the smallest level whose cells cover the shorter side; their count is the
// minimum budget. Cells are split, most wanted first (largest L - D(e_nearest)), while the
// split is wanted (D(e_nearest) < L) and the patch count stays within the budget; a
// split adds at most 3 patches, so the count ends within 3 of the budget unless every
// wanted split is done. With fill_budget every cell above level 0 may be split, and a
// split that does not fit is skipped for the next one that does: the count ends within 2
// of the budget unless every cell is at level 0. Deterministic: ties go to the cell first
// in row-major order.
struct FoveatedLayout {
    PatchLayout layout;
    std::vector<uint32_t> cell_level;  // quadtree level of each patch
    // The refinement ended at this value of L - D(e): every patch's parent was above it,
    // every unsplit patch of level > 0 is at or below it (a zero when nothing else was wanted).
    double threshold = 0.0;
};
FoveatedLayout foveated_layout(uint32_t width, uint32_t height, const FoveatedParams& params);
// The level a point at eccentricity e wants, and the eccentricity of the nearest point of
// a pixel rectangle [x0, x1] x [y0, y1] (what the construction uses).
double desired_level(const FoveatedParams& params, double eccentricity);
double eccentricity(const FoveatedParams& params, uint32_t width, uint32_t height, double x0, double y0, double x1,
                    double y1);

// Patches elongated by `elongation` (1 to 16) along the horizontal (text lines) or the
// vertical: P x P samples over (elongation * P) x P texels of `level`, sampled with
// gradients so the texture unit filters the elongated footprint anisotropically.
struct AnisotropicParams {
    uint32_t patch_size = 16;
    uint32_t level = 0;
    uint32_t elongation = 4;
    bool vertical = false;
    // With a fixation: only the `count` tiles whose centres lie nearest to it (distance in
    // level-0 texels, ties in row-major order), nearest first: an elongated glimpse around
    // the fixation. Without one (count 0): every tile, row-major.
    std::optional<Fixation> fixation;
    uint32_t count = 0;
};
PatchLayout anisotropic_layout(uint32_t width, uint32_t height, const AnisotropicParams& params);

// An image resized to resized_width x resized_height (scaled, aspect ratio not kept) and
// the window [x, x + width) x [y, y + height) of it, as P x P patches tiling the window
// row-major (P divides both sides): sample (j, k) of patch (a, b) is output pixel
// (a*P + j, b*P + k), sampled at its centre with one output pixel as the footprint
// (gradients), so the texture unit picks the level and filters anisotropically when the
// two scales differ. What the image processors sample (python/texturevlm/processors).
struct ResizeWindow {
    uint32_t resized_width = 0, resized_height = 0;
    uint32_t x = 0, y = 0, width = 0, height = 0;
    uint32_t patch_size = 16;
};
PatchLayout resize_layout(uint32_t width, uint32_t height, const ResizeWindow& window);

// One layout per image of a batch (same image size, patch size and mode), image b on layer
// b; N is the largest count (at least `min_patches_per_image`) and shorter layouts are
// padded with slots of level -1, which samplers fill with zeros.
PatchLayout batch_layouts(std::span<const PatchLayout> per_image, uint32_t min_patches_per_image = 0);

}  // namespace tvlm
