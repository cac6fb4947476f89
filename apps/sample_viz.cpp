#include "sample_viz.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "color.h"

namespace tvlm {

namespace {

constexpr uint32_t kMaxPanel = 1024;  // longest side of each half, in pixels

std::array<float, 3> level_colour(float level, float max_level) {
    const float t = max_level > 0 ? std::clamp(level / max_level, 0.0f, 1.0f) : 0.0f;
    return {t, 1.0f - std::fabs(2.0f * t - 1.0f), 1.0f - t};  // blue -> green -> red
}

}  // namespace

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

    float max_level = 0;
    for (const Patch& p : layout.patches) max_level = std::max(max_level, p.level);
    const uint32_t P = layout.patch_size, per_patch = P * P;
    const size_t first = size_t{b} * layout.patches_per_image;
    for (size_t n = first; n < first + layout.patches_per_image; ++n) {
        const Patch& p = layout.patches[n];
        if (p.level < 0) continue;
        // The footprint in panel pixels (axis-aligned; rotated patches are drawn unrotated).
        const double x0 = (double(p.cu) - p.su / 2.0) * pw, x1 = (double(p.cu) + p.su / 2.0) * pw;
        const double y0 = (double(p.cv) - p.sv / 2.0) * ph, y1 = (double(p.cv) + p.sv / 2.0) * ph;
        const auto ix0 = uint32_t(std::clamp(std::floor(x0), 0.0, double(pw))), ix1 = uint32_t(std::clamp(std::ceil(x1), 0.0, double(pw)));
        const auto iy0 = uint32_t(std::clamp(std::floor(y0), 0.0, double(ph))), iy1 = uint32_t(std::clamp(std::ceil(y1), 0.0, double(ph)));
        for (uint32_t y = iy0; y < iy1; ++y)
            for (uint32_t x = ix0; x < ix1; ++x) {
                const auto j = uint32_t(std::clamp((x + 0.5 - x0) / (x1 - x0) * P, 0.0, P - 1.0));
                const auto k = uint32_t(std::clamp((y + 0.5 - y0) / (y1 - y0) * P, 0.0, P - 1.0));
                for (uint32_t c = 0; c < 3; ++c) {
                    const float v = samples[(n * channels + c) * per_patch + k * P + j];
                    viz.at(pw + gap + x, y, c) = linear ? float(linear_to_srgb(std::clamp(double(v), 0.0, 1.0))) : v;
                }
            }
        const std::array<float, 3> colour = level_colour(p.level, max_level);
        for (uint32_t x = ix0; x < ix1; ++x)
            for (uint32_t y : {iy0, std::max(iy0, iy1 - 1)})
                for (uint32_t c = 0; c < 3; ++c) viz.at(x, y, c) = colour[c];
        for (uint32_t y = iy0; y < iy1; ++y)
            for (uint32_t x : {ix0, std::max(ix0, ix1 - 1)})
                for (uint32_t c = 0; c < 3; ++c) viz.at(x, y, c) = colour[c];
    }
    return viz;
}

}  // namespace tvlm
