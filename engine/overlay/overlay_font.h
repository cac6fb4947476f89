#pragma once
// The overlay's label font: printable ASCII (' ' to '~') of DejaVu Sans Mono Bold baked at
// build time into a signed-distance-field atlas (font/bake_font.cpp, stb_truetype), so
// labels of any size stay sharp and antialiased. nullptr where the build had no
// stb_truetype or no font (labels are then refused with the reason).
#include <cstdint>

namespace tvlm {

struct OverlayGlyph {
    int16_t x, y, width, height;  // its SDF in the atlas, in texels
    int16_t xoff, yoff;           // its top-left relative to the pen on the baseline
    float advance;                // pen movement, in atlas texels
};

struct OverlayFont {
    uint32_t width, height;  // the atlas
    float pixel_height;      // the size the glyphs were baked at
    float ascent;            // baseline below the top of a line, at that size
    float per_texel;         // SDF units per atlas texel
    uint32_t on_edge;        // the SDF value on a glyph's edge
    const unsigned char* sdf;
    const OverlayGlyph* glyphs;  // 95: ' ' to '~'
};

const OverlayFont* overlay_font();

}  // namespace tvlm
