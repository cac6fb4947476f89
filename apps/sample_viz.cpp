#include "sample_viz.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "color.h"
#include "overlay/layout_overlay.h"
#include "overlay/overlay_reference.h"

namespace tvlm {

namespace {

constexpr uint32_t kMaxPanel = 1024;  // longest side of each half, in pixels

// A patch's footprint in the pixels of a w x h picture, clipped (axis-aligned; rotated
// patches are drawn unrotated): [x0, x1) x [y0, y1), and the unclipped edges.
struct Footprint {
    double fx0, fx1, fy0, fy1;
    uint32_t x0, x1, y0, y1;
};
Footprint footprint(const Patch& p, uint32_t w, uint32_t h) {
    Footprint f{(double(p.cu) - p.su / 2.0) * w,
                (double(p.cu) + p.su / 2.0) * w,
                (double(p.cv) - p.sv / 2.0) * h,
                (double(p.cv) + p.sv / 2.0) * h,
                0,
                0,
                0,
                0};
    f.x0 = uint32_t(std::clamp(std::floor(f.fx0), 0.0, double(w)));
    f.x1 = uint32_t(std::clamp(std::ceil(f.fx1), 0.0, double(w)));
    f.y0 = uint32_t(std::clamp(std::floor(f.fy0), 0.0, double(h)));
    f.y1 = uint32_t(std::clamp(std::ceil(f.fy1), 0.0, double(h)));
    return f;
}

// The layout's outlines and fixations drawn over an RGBA8 picture by the overlay
// renderer's CPU reference (the same shapes and arithmetic as its GPU renderers).
void draw_layout(std::span<uint8_t> rgba, uint32_t width, uint32_t height, const PatchLayout& layout, uint32_t b,
                 std::span<const Fixation> fixations) {
    const OverlayScene scene = layout_overlay(layout, b, width, height, fixations);
    draw_overlay_reference(overlay_shapes(scene, width, height), rgba, width, height, false);
}

}  // namespace

void draw_patch_outlines(std::span<uint8_t> rgba, uint32_t width, uint32_t height, const PatchLayout& layout,
                         uint32_t b, std::span<const Fixation> fixations) {
    draw_layout(rgba, width, height, layout, b, fixations);
}

ImageF sample_visualisation(const ImageF& image, const PatchLayout& layout, const std::vector<float>& samples,
                            uint32_t channels, uint32_t b, bool linear) {
    const double scale = std::min(1.0, double(kMaxPanel) / std::max(image.width, image.height));
    const auto pw = std::max(1u, uint32_t(image.width * scale)), ph = std::max(1u, uint32_t(image.height * scale));
    constexpr uint32_t gap = 8;
    ImageF viz(2 * pw + gap, ph, 3);
    std::fill(viz.texels.begin(), viz.texels.end(), 0.1f);
    for (uint32_t y = 0; y < ph; ++y)
        for (uint32_t x = 0; x < pw; ++x) {
            for (uint32_t c = 0; c < 3; ++c) viz.at(x, y, c) = image.at(uint32_t(x / scale), uint32_t(y / scale), c);
        }

    const uint32_t P = layout.patch_size, per_patch = P * P;
    const size_t first = size_t{b} * layout.patches_per_image;
    for (size_t n = first; n < first + layout.patches_per_image; ++n) {
        const Patch& p = layout.patches[n];
        if (p.level < 0) continue;
        const Footprint f = footprint(p, pw, ph);
        for (uint32_t y = f.y0; y < f.y1; ++y)
            for (uint32_t x = f.x0; x < f.x1; ++x) {
                const auto j = uint32_t(std::clamp((x + 0.5 - f.fx0) / (f.fx1 - f.fx0) * P, 0.0, P - 1.0));
                const auto k = uint32_t(std::clamp((y + 0.5 - f.fy0) / (f.fy1 - f.fy0) * P, 0.0, P - 1.0));
                for (uint32_t c = 0; c < 3; ++c) {
                    const float v = samples[(n * channels + c) * per_patch + k * P + j];
                    viz.at(pw + gap + x, y, c) = linear ? float(linear_to_srgb(std::clamp(double(v), 0.0, 1.0))) : v;
                }
            }
    }
    // The outlines over the left half, through the overlay renderer (on RGBA8 bytes).
    std::vector<uint8_t> left(size_t{pw} * ph * 4, 255);
    for (uint32_t y = 0; y < ph; ++y)
        for (uint32_t x = 0; x < pw; ++x)
            for (uint32_t c = 0; c < 3; ++c)
                left[(size_t{y} * pw + x) * 4 + c] = uint8_t(
                    std::lround(std::clamp(viz.at(x, y, c), 0.0f, 1.0f) * 255.0f));
    draw_layout(left, pw, ph, layout, b, {});
    for (uint32_t y = 0; y < ph; ++y)
        for (uint32_t x = 0; x < pw; ++x)
            for (uint32_t c = 0; c < 3; ++c) viz.at(x, y, c) = float(left[(size_t{y} * pw + x) * 4 + c]) / 255.0f;
    return viz;
}

}  // namespace tvlm
