#include "apps/sample_viz.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/textures/color.h"
#include "engine/mips/mip_filter.h"
#include "engine/overlay/layout_overlay.h"
#include "engine/overlay/overlay_reference.h"
#include "engine/mips/reference_mips.h"

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

ImageF panel_image(const ImageF& image, uint32_t width, uint32_t height) {
    // Down the box mip chain while a level stays at least the panel's size, so that the last
    // step shrinks by less than 2; every texel of the image counts in every step.
    ImageF level = image;
    for (;;) {
        const Extent2D next = level_extent(level.width, level.height, 1);
        if (next.width < width || next.height < height || (next.width == level.width && next.height == level.height))
            break;
        level = reference_downsample(level, next, MipFilter::box, Format::rgba32f);
    }
    // Then an area average: each panel pixel averages the part of the level it covers.
    const auto taps = [](uint32_t from, uint32_t to) {
        std::vector<std::vector<std::pair<uint32_t, float>>> all(to);
        const double step = double(from) / to;
        for (uint32_t i = 0; i < to; ++i) {
            const double x0 = i * step, x1 = (i + 1) * step;
            for (auto t = uint32_t(x0); t < std::min(from, uint32_t(std::ceil(x1))); ++t) {
                const double w = std::min(x1, t + 1.0) - std::max(x0, double(t));
                if (w > 0) all[i].emplace_back(t, float(w / step));
            }
        }
        return all;
    };
    const auto across = taps(level.width, width), down = taps(level.height, height);
    ImageF rows(width, level.height, image.channels);
    for (uint32_t y = 0; y < level.height; ++y)
        for (uint32_t x = 0; x < width; ++x)
            for (const auto& [t, w] : across[x])
                for (uint32_t c = 0; c < image.channels; ++c) rows.at(x, y, c) += w * level.at(t, y, c);
    ImageF panel(width, height, image.channels);
    for (uint32_t y = 0; y < height; ++y)
        for (const auto& [t, w] : down[y])
            for (uint32_t x = 0; x < width; ++x)
                for (uint32_t c = 0; c < image.channels; ++c) panel.at(x, y, c) += w * rows.at(x, t, c);
    return panel;
}

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
    const ImageF panel = panel_image(image, pw, ph);
    for (uint32_t y = 0; y < ph; ++y)
        for (uint32_t x = 0; x < pw; ++x)
            for (uint32_t c = 0; c < 3; ++c) viz.at(x, y, c) = panel.at(x, y, c);

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
