#include "engine/sampling/reference_sampling.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/textures/color.h"
#include "engine/error.h"

namespace tvlm {

namespace {

using Rgba = std::array<double, 4>;

Rgba texel(const ImageF& image, Format format, int x, int y) {
    const FormatInfo& info = format_info(format);
    x = std::clamp(x, 0, int(image.width) - 1);
    y = std::clamp(y, 0, int(image.height) - 1);
    const auto ux = uint32_t(x), uy = uint32_t(y);
    if (info.channels == 1) return {image.at(ux, uy, 0), 0.0, 0.0, 1.0};
    Rgba t{image.at(ux, uy, 0), image.at(ux, uy, 1), image.at(ux, uy, 2), image.at(ux, uy, 3)};
    if (info.srgb)
        for (int c = 0; c < 3; ++c) t[size_t(c)] = srgb_to_linear(t[size_t(c)]);
    return t;
}

Rgba bilinear(const ImageF& image, Format format, double u, double v) {
    const double x = u * image.width - 0.5, y = v * image.height - 0.5;
    const double fx = std::floor(x), fy = std::floor(y);
    const double a = x - fx, b = y - fy;
    const int x0 = int(fx), y0 = int(fy);
    const Rgba t00 = texel(image, format, x0, y0), t10 = texel(image, format, x0 + 1, y0);
    const Rgba t01 = texel(image, format, x0, y0 + 1), t11 = texel(image, format, x0 + 1, y0 + 1);
    Rgba out;
    for (size_t c = 0; c < 4; ++c)
        out[c] = (1 - b) * ((1 - a) * t00[c] + a * t10[c]) + b * ((1 - a) * t01[c] + a * t11[c]);
    return out;
}

void check_images(const PatchLayout& layout, std::span<const MipLevels> images) {
    if (images.size() < layout.images)
        throw Error("the layout has " + std::to_string(layout.images) + " images but " + std::to_string(images.size()) +
                    " were given");
    for (const MipLevels& levels : images.first(layout.images))
        if (levels.size() < layout.levels_needed)
            throw Error("the layout needs " + std::to_string(layout.levels_needed) + " mip levels but the image has " +
                        std::to_string(levels.size()));
}

}  // namespace

Rgba reference_trilinear(const MipLevels& levels, Format format, double u, double v, double lod) {
    const double top = double(levels.size() - 1);
    lod = std::clamp(lod, 0.0, top);
    const double base = std::floor(lod), blend = lod - base;
    const Rgba lo = bilinear(levels[size_t(base)], format, u, v);
    if (blend == 0.0) return lo;
    const Rgba hi = bilinear(levels[size_t(base) + 1], format, u, v);
    Rgba out;
    for (size_t c = 0; c < 4; ++c) out[c] = (1 - blend) * lo[c] + blend * hi[c];
    return out;
}

std::vector<float> reference_sample_patches(const PatchLayout& layout, std::span<const MipLevels> images, Format format,
                                            uint32_t channels, uint32_t max_anisotropy) {
    check_images(layout, images);
    const uint32_t p = layout.patch_size, w = layout.width, h = layout.height;
    std::vector<float> out(layout.output_values(channels), 0.0f);
    for (size_t n = 0; n < layout.patches.size(); ++n) {
        const Patch& patch = layout.patches[n];
        if (patch.level < 0) continue;
        const MipLevels& levels = images[patch.layer];
        const Gradients g = patch_gradients(patch, p, w, h);
        const GradientFootprint footprint = gradient_footprint(g, w, h, max_anisotropy);
        for (uint32_t k = 0; k < p; ++k)
            for (uint32_t j = 0; j < p; ++j) {
                const SamplePosition s = sample_position(patch, j, k, p, w, h);
                Rgba value{};
                if (layout.mode == SamplingMode::level) {
                    value = reference_trilinear(levels, format, s.u, s.v, patch.level);
                } else {
                    const double du = footprint.major_is_x ? g.dudx : g.dudy;
                    const double dv = footprint.major_is_x ? g.dvdx : g.dvdy;
                    for (uint32_t i = 1; i <= footprint.taps; ++i) {
                        const double t = double(i) / (footprint.taps + 1) - 0.5;
                        const Rgba tap = reference_trilinear(levels, format, s.u + t * du, s.v + t * dv, footprint.lod);
                        for (size_t c = 0; c < 4; ++c) value[c] += tap[c] / footprint.taps;
                    }
                }
                for (uint32_t c = 0; c < channels; ++c) out[((n * channels + c) * p + k) * p + j] = float(value[c]);
            }
    }
    return out;
}

}  // namespace tvlm
