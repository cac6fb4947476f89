#include "engine/overlay/overlay_scene.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.h"
#include "engine/overlay/overlay_font.h"

namespace tvlm {

namespace {

void check_finite(std::initializer_list<float> values, const char* what, size_t index) {
    for (float v : values)
        if (!std::isfinite(v))
            throw Error(std::string("overlay ") + what + " " + std::to_string(index) +
                        " has a NaN or infinite coordinate or size: give finite pixels");
}

void check_size(float v, const char* field, const char* what, size_t index) {
    if (v < 0)
        throw Error(std::string("overlay ") + what + " " + std::to_string(index) + " has a negative " + field + " (" +
                    std::to_string(v) + "): sizes, widths and radii are >= 0");
}

// A straight segment (a line, or one step of a trail) with its bounds; false where nothing
// of it lies on the frame.
bool segment_shape(gpu::OverlayShape& s, float x0, float y0, float x1, float y1, float width_px, OverlayColor color,
                   bool round_caps, uint32_t width, uint32_t height) {
    s = gpu::overlay_line_shape(TVLM_SHAPE_SEGMENT, x0, y0, x1, y1, width_px, color.word());
    s.flags = round_caps ? TVLM_SHAPE_ROUND_CAPS : 0u;
    const float h = s.half_width;
    return gpu::overlay_clip_bounds(s, std::min(x0, x1) - h, std::min(y0, y1) - h, std::max(x0, x1) + h,
                                    std::max(y0, y1) + h, width, height);
}

}  // namespace

std::string label_glyphs(std::string_view text) {
    std::string glyphs;
    glyphs.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const auto lead = static_cast<unsigned char>(text[i]);
        if (lead < 0x80) {
            glyphs.push_back(lead >= 32 && lead < 127 ? static_cast<char>(lead) : '?');
            ++i;
            continue;
        }
        // A lead byte and the continuation bytes (10xxxxxx) it announces: one character.
        const size_t length = lead >= 0xf0 && lead < 0xf8 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
        size_t n = 1;
        while (n < length && i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xc0) == 0x80) ++n;
        glyphs.push_back('?');
        i += n;
    }
    return glyphs;
}

std::vector<gpu::OverlayShape> overlay_shapes(const OverlayScene& scene, uint32_t width, uint32_t height,
                                              size_t* curves_end) {
    if (width == 0 || height == 0) throw Error("an overlay needs a frame of at least 1x1 pixels");
    size_t total = scene.boxes.size() + scene.points.size() + scene.lines.size() + scene.curves.size();
    for (const OverlayTrail& t : scene.trails) total += t.xy.size() / 2;
    for (const OverlayLabel& l : scene.labels) total += l.text.size() + 1;
    if (total > kMaxOverlayShapes)
        throw Error("an overlay scene of " + std::to_string(total) + " shapes: at most " +
                    std::to_string(kMaxOverlayShapes) + " per draw; draw it in parts");
    std::vector<gpu::OverlayShape> shapes;
    shapes.reserve(total);
    for (size_t i = 0; i < scene.boxes.size(); ++i) {
        const OverlayBox& b = scene.boxes[i];
        check_finite({b.cx, b.cy, b.width, b.height, b.radius, b.stroke_width}, "box", i);
        check_size(b.width, "width", "box", i);
        check_size(b.height, "height", "box", i);
        check_size(b.radius, "radius", "box", i);
        check_size(b.stroke_width, "stroke width", "box", i);
        if (b.width == 0 || b.height == 0 || (b.fill.a == 0 && (b.stroke.a == 0 || b.stroke_width == 0))) continue;
        gpu::OverlayShape s{};
        s.kind = TVLM_SHAPE_BOX;
        s.x0 = b.cx;
        s.y0 = b.cy;
        s.x1 = 0.5f * b.width;
        s.y1 = 0.5f * b.height;
        s.radius = b.radius;
        s.half_width = 0.5f * b.stroke_width;
        s.fill = b.fill.word();
        s.stroke = b.stroke.word();
        if (gpu::overlay_clip_bounds(s, b.cx - s.x1, b.cy - s.y1, b.cx + s.x1, b.cy + s.y1, width, height))
            shapes.push_back(s);
    }
    for (size_t i = 0; i < scene.lines.size(); ++i) {
        const OverlayLine& l = scene.lines[i];
        check_finite({l.x0, l.y0, l.x1, l.y1, l.width}, "line", i);
        check_size(l.width, "width", "line", i);
        if (l.width == 0 || l.color.a == 0) continue;
        gpu::OverlayShape s;
        if (segment_shape(s, l.x0, l.y0, l.x1, l.y1, l.width, l.color, l.round_caps, width, height))
            shapes.push_back(s);
    }
    for (size_t i = 0; i < scene.trails.size(); ++i) {
        const OverlayTrail& t = scene.trails[i];
        if (t.xy.size() % 2)
            throw Error("overlay trail " + std::to_string(i) + " has an odd number of coordinates: give x, y pairs");
        check_size(t.width, "width", "trail", i);
        for (size_t k = 0; k < t.xy.size(); ++k) check_finite({t.xy[k]}, "trail", i);
        const size_t positions = t.xy.size() / 2;
        if (positions < 2 || t.width == 0 || t.color.a == 0) continue;
        for (size_t k = 0; k + 1 < positions; ++k) {
            OverlayColor c = t.color;  // segment k of positions - 1: faded by its age
            c.a = uint8_t(std::lround(double(t.color.a) * double(k + 1) / double(positions - 1)));
            if (c.a == 0) continue;
            gpu::OverlayShape s;
            if (segment_shape(s, t.xy[2 * k], t.xy[2 * k + 1], t.xy[2 * k + 2], t.xy[2 * k + 3], t.width, c, true,
                              width, height))
                shapes.push_back(s);
        }
    }
    for (size_t i = 0; i < scene.curves.size(); ++i) {
        const OverlayCurve& c = scene.curves[i];
        check_finite({c.x0, c.y0, c.x1, c.y1, c.width}, "curve", i);
        check_size(c.width, "width", "curve", i);
        if (c.width == 0 || c.color.a == 0) continue;
        gpu::OverlayShape s;
        if (gpu::overlay_curve_shape(s, c.x0, c.y0, c.x1, c.y1, c.width, c.color.word(), width, height))
            shapes.push_back(s);
    }
    if (curves_end) *curves_end = shapes.size();
    for (size_t i = 0; i < scene.points.size(); ++i) {
        const OverlayPoint& p = scene.points[i];
        check_finite({p.x, p.y, p.radius}, "point", i);
        check_size(p.radius, "radius", "point", i);
        if (p.radius == 0 || p.color.a == 0) continue;
        // A disc: a box whose corner radius is its half size, filled.
        gpu::OverlayShape s{};
        s.kind = TVLM_SHAPE_BOX;
        s.x0 = p.x;
        s.y0 = p.y;
        s.x1 = s.y1 = s.radius = p.radius;
        s.fill = p.color.word();
        if (gpu::overlay_clip_bounds(s, p.x - p.radius, p.y - p.radius, p.x + p.radius, p.y + p.radius, width, height))
            shapes.push_back(s);
    }
    const OverlayFont* font = scene.labels.empty() ? nullptr : overlay_font();
    if (!scene.labels.empty() && !font)
        throw Error(
            "this texturevlm was built without a label font (stb_truetype and DejaVu fonts: Debian's libstb-dev "
            "and fonts-dejavu-core); install them and rebuild to draw labels");
    for (size_t i = 0; i < scene.labels.size(); ++i) {
        const OverlayLabel& l = scene.labels[i];
        check_finite({l.x, l.y, l.size}, "label", i);
        check_size(l.size, "size", "label", i);
        if (l.size == 0 || l.text.empty()) continue;
        const float k = l.size / font->pixel_height;  // frame pixels per atlas texel
        const std::string glyphs = label_glyphs(l.text);
        float advance = 0;
        for (char ch : glyphs) advance += font->glyphs[ch - 32].advance * k;
        const float margin = 0.15f * l.size;
        if (l.background.a) {
            gpu::OverlayShape s{};
            s.kind = TVLM_SHAPE_BOX;
            s.x0 = l.x + 0.5f * advance + margin;
            s.y0 = l.y + 0.5f * l.size;
            s.x1 = 0.5f * advance + margin;
            s.y1 = 0.5f * l.size;
            s.radius = margin;
            s.fill = l.background.word();
            if (gpu::overlay_clip_bounds(s, l.x, l.y, l.x + advance + 2 * margin, l.y + l.size, width, height))
                shapes.push_back(s);
        }
        if (l.color.a == 0) continue;
        float pen = l.x + margin;
        const float baseline = l.y + 0.5f * l.size + 0.35f * font->ascent * k;  // the caps centred in the line
        for (char ch : glyphs) {
            const OverlayGlyph& g = font->glyphs[ch - 32];
            if (ch != ' ' && g.width > 0) {
                gpu::OverlayShape s{};
                s.kind = TVLM_SHAPE_GLYPH;
                s.x0 = pen + float(g.xoff) * k;
                s.y0 = baseline + float(g.yoff) * k;
                s.x1 = s.x0 + float(g.width) * k;
                s.y1 = s.y0 + float(g.height) * k;
                s.cx = float(g.x);
                s.cy = float(g.y);
                s.radius = 1.0f / k;
                s.stroke = l.color.word();
                if (gpu::overlay_clip_bounds(s, s.x0, s.y0, s.x1, s.y1, width, height)) shapes.push_back(s);
            }
            pen += g.advance * k;
        }
    }
    return shapes;
}

void check_overlay_format(Format format, std::string_view who) {
    if (format != Format::rgba8_unorm && format != Format::rgba8_srgb && format != Format::rgba16f)
        throw Error(std::string(who) + ": overlays draw on RGBA8 (UNORM or sRGB) and RGBA16F frames, not " +
                    std::string(format_info(format).name));
}

uint64_t overlay_tile_pairs(std::span<const gpu::OverlayShape> shapes, uint32_t width, uint32_t height) {
    uint64_t pairs = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
        const gpu::OverlayShape& s = shapes[i];
        if (!(s.min_x >= 0 && s.min_y >= 0 && s.max_x < float(width) && s.max_y < float(height) && s.min_x <= s.max_x &&
              s.min_y <= s.max_y))
            throw Error("overlay shape " + std::to_string(i) + " has bounds outside the " + std::to_string(width) +
                        "x" + std::to_string(height) + " frame: make the shapes with overlay_shapes() for this frame");
        pairs += uint64_t(gpu::overlay_tile_of(s.max_x) - gpu::overlay_tile_of(s.min_x) + 1) *
                 uint64_t(gpu::overlay_tile_of(s.max_y) - gpu::overlay_tile_of(s.min_y) + 1);
    }
    if (pairs > (uint64_t{1} << 31))
        throw Error("an overlay of " + std::to_string(pairs) + " shape-tile pairs: draw it in parts");
    return pairs;
}

}  // namespace tvlm
