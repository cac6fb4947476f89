#include "patch.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "error.h"

namespace tvlm {

std::string_view sampling_mode_name(SamplingMode mode) {
    return mode == SamplingMode::level ? "level" : "gradients";
}

std::vector<float> patch_metadata(const PatchLayout& layout) {
    std::vector<float> rows;
    rows.reserve(layout.metadata_values());
    for (const Patch& p : layout.patches) {
        if (p.level < 0) rows.insert(rows.end(), {0.0f, 0.0f, 0.0f, 0.0f, -1.0f});
        else rows.insert(rows.end(), {p.cu, p.cv, p.su, p.sv, p.level});
    }
    return rows;
}

void check_patch_geometry(uint32_t width, uint32_t height, uint32_t patch_size) {
    if (width == 0 || height == 0)
        throw Error("cannot lay out patches on an empty " + std::to_string(width) + "x" + std::to_string(height) +
                    " image");
    if (patch_size == 0 || patch_size > kMaxPatchSize)
        throw Error("patch size " + std::to_string(patch_size) + " is out of range: use 1 to " +
                    std::to_string(kMaxPatchSize) + " samples per side");
}

SamplePosition sample_position(const Patch& patch, uint32_t j, uint32_t k, uint32_t patch_size,
                               uint32_t width, uint32_t height) {
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
    const double ratio = rho_min > 0 ? std::ceil(rho_max / rho_min) : double(max_anisotropy);
    const auto taps = static_cast<uint32_t>(std::clamp(ratio, 1.0, double(std::max(max_anisotropy, 1u))));
    return {rho_max > 0 ? std::log2(rho_max / taps) : 0.0, taps, rho_x >= rho_y};
}

}  // namespace tvlm
