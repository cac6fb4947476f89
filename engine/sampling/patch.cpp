#include "engine/sampling/patch.h"

#include <cstring>

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.h"

namespace tvlm {

std::string_view sampling_mode_name(SamplingMode mode) { return mode == SamplingMode::level ? "level" : "gradients"; }

std::vector<float> patch_metadata(const PatchLayout& layout) {
    std::vector<float> rows;
    rows.reserve(layout.metadata_values());
    for (const Patch& p : layout.patches) {
        if (p.level < 0) rows.insert(rows.end(), {0.0f, 0.0f, 0.0f, 0.0f, -1.0f});
        else rows.insert(rows.end(), {p.cu, p.cv, p.su, p.sv, p.level});
    }
    return rows;
}

void check_patch_target(const PatchLayout& layout, const PatchOutput& output, uint32_t width, uint32_t height,
                        uint32_t levels, uint32_t layers, size_t output_bytes) {
    const auto str = [](auto v) { return std::to_string(v); };
    if (width != layout.width || height != layout.height)
        throw Error("the layout is for " + str(layout.width) + "x" + str(layout.height) +
                    " images but the texture is " + str(width) + "x" + str(height));
    if (levels < layout.levels_needed)
        throw Error("the layout samples " + str(layout.levels_needed) + " mip levels but the texture has " +
                    str(levels) + ": create it with more levels and generate them");
    if (layers < layout.images)
        throw Error("the layout has " + str(layout.images) + " images but the texture has " + str(layers) + " layers");
    if (output_bytes != output.bytes(layout))
        throw Error("the output buffer holds " + str(output_bytes) + " bytes but [B, N, C, P, P] = [" +
                    str(layout.images) + ", " + str(layout.patches_per_image) + ", " + str(output.channels) + ", " +
                    str(layout.patch_size) + ", " + str(layout.patch_size) + "] needs " + str(output.bytes(layout)));
}

void check_patch_geometry(uint32_t width, uint32_t height, uint32_t patch_size) {
    if (width == 0 || height == 0)
        throw Error("cannot lay out patches on an empty " + std::to_string(width) + "x" + std::to_string(height) +
                    " image");
    if (patch_size == 0 || patch_size > kMaxPatchSize)
        throw Error("patch size " + std::to_string(patch_size) + " is out of range: use 1 to " +
                    std::to_string(kMaxPatchSize) + " samples per side");
}

SamplePosition sample_position(const Patch& patch, uint32_t j, uint32_t k, uint32_t patch_size, uint32_t width,
                               uint32_t height) {
    const double a = ((j + 0.5) / patch_size - 0.5) * double(patch.su) * width;   // pixels along the axis
    const double b = ((k + 0.5) / patch_size - 0.5) * double(patch.sv) * height;  // pixels across it
    const double ax = patch.axis_x, ay = patch.axis_y;
    return {patch.cu + (a * ax - b * ay) / width, patch.cv + (a * ay + b * ax) / height};
}

Gradients patch_gradients(const Patch& patch, uint32_t patch_size, uint32_t width, uint32_t height) {
    const double along = double(patch.su) * width / patch_size;    // pixels between samples along j
    const double across = double(patch.sv) * height / patch_size;  // pixels between samples along k
    const double ax = patch.axis_x, ay = patch.axis_y;
    return {along * ax / width, along * ay / height, -across * ay / width, across * ax / height};
}

GradientFootprint gradient_footprint(const Gradients& g, uint32_t width, uint32_t height, uint32_t max_anisotropy) {
    const double rho_x = std::hypot(g.dudx * width, g.dvdx * height);
    const double rho_y = std::hypot(g.dudy * width, g.dvdy * height);
    const double rho_max = std::max(rho_x, rho_y), rho_min = std::min(rho_x, rho_y);
    const double ratio = rho_min > 0 ? std::ceil(rho_max / rho_min - TVLM_RATIO_SLACK) : double(max_anisotropy);
    // Magnification (no footprint wider than a texel) is one bilinear tap, as texture units
    // filter it (the magnification filter has no anisotropy).
    const auto taps = rho_max <= 1.0
                          ? 1u
                          : static_cast<uint32_t>(std::clamp(ratio, 1.0, double(std::max(max_anisotropy, 1u))));
    return {rho_max > 0 ? std::log2(rho_max / taps) : 0.0, taps, rho_x >= rho_y};
}

bool PatchLayout::same_sampling(const PatchLayout& o) const {
    return width == o.width && height == o.height && patch_size == o.patch_size && images == o.images &&
           patches_per_image == o.patches_per_image && mode == o.mode && patches.size() == o.patches.size() &&
           std::memcmp(patches.data(), o.patches.data(), patches.size() * sizeof(Patch)) == 0;
}

}  // namespace tvlm
