#include "engine/textures/test_chart.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace tvlm {

namespace {

struct Rgb {
    double r, g, b;
};

Rgb grey(double v) { return {v, v, v}; }

// Hue wheel, full saturation, for the colour gradient.
Rgb hue(double h) {
    const double k[3] = {5.0, 3.0, 1.0};
    double c[3];
    for (int i = 0; i < 3; ++i) {
        const double x = std::fmod(k[i] + h * 6.0, 6.0);
        c[i] = 1.0 - std::clamp(std::min(x, 4.0 - x), 0.0, 1.0);
    }
    return {c[0], c[1], c[2]};
}

// Deterministic hash for the text-like detail.
uint32_t hash(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

// Pseudo-text: lines of 3x5-cell glyphs (2 px cells), words separated by gaps.
Rgb text_like(double u, double v, uint32_t px, uint32_t py) {
    (void)u;
    (void)v;
    const uint32_t line = py / 14, row_in_line = py % 14;
    const uint32_t glyph = px / 8, col_in_glyph = px % 8;
    if (row_in_line >= 10 || col_in_glyph >= 6) return grey(0.95);
    if (hash(line * 977u + glyph / 6u) % 5u == 0 || glyph % 6u == 5u) return grey(0.95);  // word gap
    const uint32_t bit = (row_in_line / 2) * 3 + col_in_glyph / 2;
    return (hash(line * 7919u + glyph) >> bit) & 1u ? grey(0.08) : grey(0.95);
}

Rgb chart_texel(uint32_t x, uint32_t y, uint32_t w, uint32_t h) {
    const double u = (x + 0.5) / w, v = (y + 0.5) / h;
    if (v < 0.125) return u < 0.5 ? hue(u * 2.0) : grey((u - 0.5) * 2.0);  // colour and grey ramps
    const double cell_w = w / 6.0, cell_h = (h * 0.875) / 4.0;
    const int col = std::min(5, static_cast<int>(x / cell_w));
    const int row = std::min(3, static_cast<int>((y - h * 0.125) / cell_h));
    const double lx = x - col * cell_w, ly = (y - h * 0.125) - row * cell_h;  // local pixels
    const int cell = row * 6 + col;
    if (cell == 0 || cell == 1 || cell == 6 || cell == 7) {  // zone plate across a 2x2 block
        const double cx = cell_w, cy = h * 0.125 + cell_h;
        const double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
        const double r2 = dx * dx + dy * dy;
        return grey(0.5 + 0.5 * std::cos(std::numbers::pi * r2 / (2.0 * cell_w)));
    }
    if (cell >= 2 && cell <= 5) {  // stripes: periods 2, 3, 4, 7 px at 0, 30, 45, 90 degrees
        static constexpr double periods[4] = {2.0, 3.0, 4.0, 7.0};
        static constexpr double angles[4] = {0.0, 30.0, 45.0, 90.0};
        const double a = angles[cell - 2] * std::numbers::pi / 180.0;
        const double t = (lx * std::cos(a) + ly * std::sin(a)) / periods[cell - 2];
        return std::fmod(std::floor(t), 2.0) == 0.0 ? Rgb{0.9, 0.9, 0.2} : Rgb{0.1, 0.1, 0.5};
    }
    if (cell >= 8 && cell <= 11) {  // checkerboards of 1, 2, 4, 8 px
        const uint32_t size = 1u << (cell - 8);
        const uint32_t cx = static_cast<uint32_t>(lx) / size, cy = static_cast<uint32_t>(ly) / size;
        return (cx + cy) % 2 ? grey(1.0) : grey(0.0);
    }
    if (cell >= 12 && cell <= 17) return text_like(u, v, static_cast<uint32_t>(lx), static_cast<uint32_t>(ly));
    // Bottom row: radial colour sweep and fine diagonal red/cyan lines.
    if (cell % 2 == 0) {
        const double a = std::atan2(ly - cell_h / 2, lx - cell_w / 2);
        return hue(a / (2.0 * std::numbers::pi) + 0.5);
    }
    return (static_cast<uint32_t>(lx + ly) % 3u) == 0 ? Rgb{0.9, 0.1, 0.1} : Rgb{0.1, 0.8, 0.8};
}

}  // namespace

Rgba8Image make_test_chart(uint32_t width, uint32_t height) {
    Rgba8Image image{width, height, std::vector<uint8_t>(size_t{width} * height * 4)};
    for (uint32_t y = 0; y < height; ++y)
        for (uint32_t x = 0; x < width; ++x) {
            const Rgb c = chart_texel(x, y, width, height);
            uint8_t* p = &image.texels[(size_t{y} * width + x) * 4];
            p[0] = static_cast<uint8_t>(std::lround(std::clamp(c.r, 0.0, 1.0) * 255.0));
            p[1] = static_cast<uint8_t>(std::lround(std::clamp(c.g, 0.0, 1.0) * 255.0));
            p[2] = static_cast<uint8_t>(std::lround(std::clamp(c.b, 0.0, 1.0) * 255.0));
            p[3] = 255;
        }
    return image;
}

}  // namespace tvlm
