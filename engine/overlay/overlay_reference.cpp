#include "overlay_reference.h"

#include <cmath>
#include <cstring>

#include "error.h"
#include "overlay_font.h"

namespace tvlm {

void draw_overlay_reference(std::span<const gpu::OverlayShape> shapes, std::span<uint8_t> rgba, uint32_t width,
                            uint32_t height, bool srgb) {
    if (rgba.size() != size_t{width} * height * 4)
        throw Error("draw_overlay_reference: the frame holds " + std::to_string(rgba.size()) + " bytes, not " +
                    std::to_string(size_t{width} * height * 4) + " (RGBA8, tight rows)");
    const uint32_t mode = srgb ? 1u : 0u;
    const OverlayFont* font = overlay_font();
    const auto texel = [&](uint32_t x, uint32_t y) { return float(font->sdf[size_t{y} * font->width + x]); };
    for (uint32_t y = 0; y < height; ++y)
        for (uint32_t x = 0; x < width; ++x) {
            uint32_t word = 0;
            std::memcpy(&word, &rgba[(size_t{y} * width + x) * 4], 4);
            gpu::OverlayPixel dst = gpu::overlay_load(word, mode);
            bool touched = false;
            const float px = float(x) + 0.5f, py = float(y) + 0.5f;
            for (const gpu::OverlayShape& s : shapes) {
                if (!gpu::overlay_touches(s, float(x), float(y), float(x) + 1, float(y) + 1)) continue;
                gpu::OverlayCoverage c = gpu::overlay_shape_coverage(s, px, py);
                if (s.kind == TVLM_SHAPE_GLYPH) {  // as overlay_shade.comp samples the atlas
                    const gpu::OverlayAtlasPoint a = gpu::overlay_glyph_atlas_point(s, px, py);
                    const auto ax = uint32_t(std::floor(a.x)), ay = uint32_t(std::floor(a.y));
                    const float fx = a.x - std::floor(a.x), fy = a.y - std::floor(a.y);
                    c.stroke = gpu::overlay_glyph_coverage(
                        gpu::overlay_bilinear(texel(ax, ay), texel(ax + 1, ay), texel(ax, ay + 1), texel(ax + 1, ay + 1), fx, fy),
                        s.radius);
                }
                if (c.fill > 0 || c.stroke > 0) {
                    dst = gpu::overlay_over(dst, s, c, mode);
                    touched = true;
                }
            }
            if (touched) {
                word = gpu::overlay_store(dst, mode);
                std::memcpy(&rgba[(size_t{y} * width + x) * 4], &word, 4);
            }
        }
}

}  // namespace tvlm
