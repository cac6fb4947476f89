#include "engine/overlay/overlay_reference.h"

#include <cmath>
#include <cstring>

#include "engine/error.h"
#include "engine/textures/half.h"
#include "engine/overlay/overlay_font.h"

namespace tvlm {

namespace {

// Every pixel against every shape in order: `load(i)` gives pixel i in the blending space,
// `store(i, p)` writes it back (only where a shape covered it).
template <class Load, class Store>
void composite_all(std::span<const gpu::OverlayShape> shapes, uint32_t width, uint32_t height, uint32_t mode, Load load,
                   Store store) {
    const OverlayFont* font = overlay_font();
    const auto texel = [&](uint32_t x, uint32_t y) { return float(font->sdf[size_t{y} * font->width + x]); };
    for (uint32_t y = 0; y < height; ++y)
        for (uint32_t x = 0; x < width; ++x) {
            const size_t i = size_t{y} * width + x;
            gpu::OverlayPixel dst = load(i);
            bool touched = false;
            const float px = float(x) + 0.5f, py = float(y) + 0.5f;
            for (const gpu::OverlayShape& s : shapes) {
                if (!gpu::overlay_touches(s, float(x), float(y), float(x) + 1, float(y) + 1)) continue;
                gpu::OverlayCoverage c = gpu::overlay_shape_coverage(s, px, py);
                if (s.kind == TVLM_SHAPE_GLYPH) {  // as overlay_shade.glsl samples the atlas
                    const gpu::OverlayAtlasTaps a = gpu::overlay_glyph_taps(s, px, py);
                    c.stroke = gpu::overlay_glyph_coverage_of(s, a, texel(a.x, a.y), texel(a.x + 1, a.y),
                                                              texel(a.x, a.y + 1), texel(a.x + 1, a.y + 1));
                }
                if (c.fill > 0 || c.stroke > 0) {
                    dst = gpu::overlay_over(dst, s, c, mode);
                    touched = true;
                }
            }
            if (touched) store(i, dst);
        }
}

}  // namespace

void draw_overlay_reference(std::span<const gpu::OverlayShape> shapes, std::span<uint8_t> rgba, uint32_t width,
                            uint32_t height, bool srgb) {
    if (rgba.size() != size_t{width} * height * 4)
        throw Error("draw_overlay_reference: the frame holds " + std::to_string(rgba.size()) + " bytes, not " +
                    std::to_string(size_t{width} * height * 4) + " (RGBA8, tight rows)");
    const uint32_t mode = srgb ? 1u : 0u;
    composite_all(
        shapes, width, height, mode,
        [&](size_t i) {
            uint32_t word = 0;
            std::memcpy(&word, &rgba[i * 4], 4);
            return gpu::overlay_load(word, mode);
        },
        [&](size_t i, const gpu::OverlayPixel& p) {
            const uint32_t word = gpu::overlay_store(p, mode);
            std::memcpy(&rgba[i * 4], &word, 4);
        });
}

void draw_overlay_reference_f16(std::span<const gpu::OverlayShape> shapes, std::span<uint16_t> halves, uint32_t width,
                                uint32_t height) {
    if (halves.size() != size_t{width} * height * 4)
        throw Error("draw_overlay_reference_f16: the frame holds " + std::to_string(halves.size()) + " halves, not " +
                    std::to_string(size_t{width} * height * 4) + " (RGBA16F, tight rows)");
    composite_all(
        shapes, width, height, 0u,
        [&](size_t i) {
            return gpu::OverlayPixel{half_to_float(halves[i * 4]), half_to_float(halves[i * 4 + 1]),
                                     half_to_float(halves[i * 4 + 2]), half_to_float(halves[i * 4 + 3])};
        },
        [&](size_t i, const gpu::OverlayPixel& p) {
            halves[i * 4] = float_to_half(p.r);
            halves[i * 4 + 1] = float_to_half(p.g);
            halves[i * 4 + 2] = float_to_half(p.b);
            halves[i * 4 + 3] = float_to_half(p.a);
        });
}

}  // namespace tvlm
