// The overlay renderer's primitives, written once for GLSL (shaders/overlay_*.comp) and C++
// (engine/overlay: the scene's shapes and the CPU reference): each shape's record, its
// signed distance, its antialiased coverage (one pixel wide, from the distance) and the
// premultiplied colour it composites "over" the frame. Coordinates are pixels, (0, 0) the
// top-left corner of the frame, pixel (x, y) centred at (x + 0.5, y + 0.5).
#ifndef TVLM_OVERLAY_SHAPES_H
#define TVLM_OVERLAY_SHAPES_H

#if defined(__CUDACC__)
#include <cstdint>
#define TVLM_OVERLAY_FN __host__ __device__ inline
namespace tvlm::gpu {
using uint = uint32_t;
// The float functions GLSL names, for device code.
TVLM_OVERLAY_FN float abs(float x) { return fabsf(x); }
TVLM_OVERLAY_FN float acos(float x) { return acosf(x); }
TVLM_OVERLAY_FN float cos(float x) { return cosf(x); }
TVLM_OVERLAY_FN float floor(float x) { return floorf(x); }
TVLM_OVERLAY_FN float max(float a, float b) { return fmaxf(a, b); }
TVLM_OVERLAY_FN float min(float a, float b) { return fminf(a, b); }
TVLM_OVERLAY_FN float pow(float x, float y) { return powf(x, y); }
TVLM_OVERLAY_FN float sin(float x) { return sinf(x); }
// The hardware's square root (one instruction, within 2 ulp; IEEE sqrtf is a dozen with a
// slow path): distances feed a one-pixel coverage ramp, where 2 ulp never shows in 8 bits.
TVLM_OVERLAY_FN float sqrt(float x) {
#if defined(__CUDA_ARCH__)
    float root;
    asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(root) : "f"(x));
    return root;
#else
    return sqrtf(x);
#endif
}
TVLM_OVERLAY_FN float clamp(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }
#elif defined(__cplusplus)
#include <algorithm>
#include <cmath>
#include <cstdint>
#define TVLM_OVERLAY_FN inline
namespace tvlm::gpu {
using uint = uint32_t;
using std::abs;
using std::acos;
using std::cos;
using std::floor;
using std::max;
using std::min;
using std::pow;
using std::sin;
using std::sqrt;
TVLM_OVERLAY_FN float clamp(float x, float lo, float hi) { return min(max(x, lo), hi); }
#else
#define TVLM_OVERLAY_FN
#endif

// Screen tiles of TVLM_OVERLAY_TILE^2 pixels are the unit of binning; a workgroup shades
// one tile, an invocation one pixel.
#define TVLM_OVERLAY_TILE 16
#define TVLM_OVERLAY_THREADS 256
// A tile's list is sorted in shared memory up to this length; longer lists (thousands of
// shapes over one tile) are walked in shape order over the whole scene instead.
#define TVLM_OVERLAY_SORTED 2048

#define TVLM_SHAPE_BOX 0u      // rounded rectangle, filled and stroked inside its edge
#define TVLM_SHAPE_SEGMENT 1u  // straight line of a width, round or butt caps
#define TVLM_SHAPE_CURVE 2u    // quadratic Bezier of a width, round caps
#define TVLM_SHAPE_GLYPH 3u    // a label's character: a quad over the font's SDF atlas
#define TVLM_SHAPE_ROUND_CAPS 1u

// The label font's signed-distance atlas (engine/overlay/overlay_font.h): a texel holds
// TVLM_OVERLAY_SDF_ON_EDGE on a glyph's edge, and changes by TVLM_OVERLAY_SDF_PER_TEXEL per
// atlas texel, larger inside.
#define TVLM_OVERLAY_SDF_ON_EDGE 128
#define TVLM_OVERLAY_SDF_PER_TEXEL 24

// One shape, std430 (64 bytes). Colours are RGBA8 words (r in the low byte), straight
// (not premultiplied); alpha is the opacity.
struct OverlayShape {
    float x0;  // box: centre; segment, curve: start; glyph: its quad's top-left
    float y0;
    float x1;  // box: half width and height; segment, curve: end; glyph: its quad's bottom-right
    float y1;
    float cx;  // curve: control point; glyph: its SDF's top-left texel in the atlas
    float cy;
    float radius;      // box: corner radius (clamped to the half size); glyph: atlas texels per pixel
    float half_width;  // box: half the stroke width; segment, curve: half the line width
    uint kind;         // TVLM_SHAPE_*
    uint flags;        // TVLM_SHAPE_ROUND_CAPS
    uint fill;         // box only
    uint stroke;       // box: its stroke; segment, curve: the line
    float min_x;       // bounds of every pixel the shape may cover (antialiasing included)
    float min_y;
    float max_x;
    float max_y;
};

// Push constants of the overlay shaders.
struct OverlayParams {
    uint width;  // the frame
    uint height;
    uint tiles_x;  // ceil(width / TVLM_OVERLAY_TILE)
    uint tiles_y;
    uint shape_count;
    uint mode;         // overlay_bin.comp: 0 counts the tiles' shapes, 1 fills their lists
    uint srgb;         // 1: the frame's bytes are sRGB, blended in linear light
    uint atlas_width;  // the label font's atlas, in texels (bytes)
};

// The tile row or column holding pixel coordinate `c` (>= 0).
TVLM_OVERLAY_FN int overlay_tile_of(float c) { return int(floor(c)) / TVLM_OVERLAY_TILE; }

// Coverage of a pixel whose centre lies `d` outside an edge: a one-pixel ramp.
TVLM_OVERLAY_FN float overlay_coverage(float d) { return clamp(0.5f - d, 0.0f, 1.0f); }

// Signed distance from (px, py), relative to a rounded box's centre, to the box of half
// size (hx, hy) and corner radius r (Inigo Quilez's sdRoundBox).
TVLM_OVERLAY_FN float overlay_round_box_distance(float px, float py, float hx, float hy, float r) {
    const float qx = abs(px) - hx + r, qy = abs(py) - hy + r;
    const float ox = max(qx, 0.0f), oy = max(qy, 0.0f);
    return sqrt(ox * ox + oy * oy) + min(max(qx, qy), 0.0f) - r;
}

// Distance from (px, py) to the segment (ax, ay) - (bx, by).
TVLM_OVERLAY_FN float overlay_segment_distance(float px, float py, float ax, float ay, float bx, float by) {
    const float dx = bx - ax, dy = by - ay, wx = px - ax, wy = py - ay;
    const float length2 = dx * dx + dy * dy;
    const float t = length2 > 0.0f ? clamp((wx * dx + wy * dy) / length2, 0.0f, 1.0f) : 0.0f;
    const float ex = wx - dx * t, ey = wy - dy * t;
    return sqrt(ex * ex + ey * ey);
}

// The cube root, and the cosine and sine of an angle in [0, pi/3] (the Bezier distance's
// roots): on CUDA the hardware's fast forms, a tenth of the instructions of pow and the
// range-reducing sinf/cosf, within 1e-6 of them, far below what one 8-bit step of coverage
// can show.
TVLM_OVERLAY_FN float overlay_cbrt(float x) {
#if defined(__CUDA_ARCH__)
    return cbrtf(x);
#else
    return x < 0.0f ? -pow(-x, 1.0f / 3.0f) : pow(x, 1.0f / 3.0f);
#endif
}
struct OverlayCosSin {
    float c;
    float s;
};
TVLM_OVERLAY_FN OverlayCosSin overlay_cos_sin_small(float v) {
    OverlayCosSin r;
#if defined(__CUDA_ARCH__)
    r.c = __cosf(v);
    r.s = __sinf(v);
#else
    r.c = cos(v);
    r.s = sin(v);
#endif
    return r;
}

// Distance from (px, py) to the quadratic Bezier from A through control B to C: the
// closest parameter solves a cubic, in closed form (Inigo Quilez's sdBezier). A straight
// curve (B on the chord's midpoint, or A = B = C) is a segment.
TVLM_OVERLAY_FN float overlay_bezier_distance(float px, float py, float Ax, float Ay, float Bx, float By, float Cx,
                                              float Cy) {
    const float ax = Bx - Ax, ay = By - Ay;
    const float bx = Ax - 2.0f * Bx + Cx, by = Ay - 2.0f * By + Cy;
    const float bb = bx * bx + by * by;
    if (bb < 1e-6f) return overlay_segment_distance(px, py, Ax, Ay, Cx, Cy);
    const float cx = 2.0f * ax, cy = 2.0f * ay;
    const float dx = Ax - px, dy = Ay - py;
    const float kk = 1.0f / bb;
    const float kx = kk * (ax * bx + ay * by);
    const float ky = kk * (2.0f * (ax * ax + ay * ay) + (dx * bx + dy * by)) / 3.0f;
    const float kz = kk * (dx * ax + dy * ay);
    const float p = ky - kx * kx, q = kx * (2.0f * kx * kx - 3.0f * ky) + kz;
    const float h = q * q + 4.0f * p * p * p;
    float best;
    if (h >= 0.0f) {
        const float root = sqrt(h);
        const float t = clamp(overlay_cbrt((root - q) * 0.5f) + overlay_cbrt((-root - q) * 0.5f) - kx, 0.0f, 1.0f);
        const float ex = dx + (cx + bx * t) * t, ey = dy + (cy + by * t) * t;
        best = ex * ex + ey * ey;
    } else {
        const float z = sqrt(-p);
        const float v = acos(clamp(q / (p * z * 2.0f), -1.0f, 1.0f)) / 3.0f;
        const OverlayCosSin cs = overlay_cos_sin_small(v);
        const float m = cs.c, n = cs.s * 1.732050808f;
        const float t0 = clamp((m + m) * z - kx, 0.0f, 1.0f), t1 = clamp((-n - m) * z - kx, 0.0f, 1.0f);
        const float e0x = dx + (cx + bx * t0) * t0, e0y = dy + (cy + by * t0) * t0;
        const float e1x = dx + (cx + bx * t1) * t1, e1y = dy + (cy + by * t1) * t1;
        best = min(e0x * e0x + e0y * e0y, e1x * e1x + e1y * e1y);
    }
    return sqrt(best);
}

// An RGBA8 word's channel `c` in [0, 1].
// (A multiply by the reciprocal, not a division: a tenth of the instructions on a GPU; the
// CPU reference does the same, so both round alike.)
TVLM_OVERLAY_FN float overlay_channel(uint rgba, uint c) { return float((rgba >> (8u * c)) & 0xffu) * (1.0f / 255.0f); }

// sRGB <-> linear light (IEC 61966-2-1), for blending sRGB frames.
TVLM_OVERLAY_FN float overlay_srgb_to_linear(float c) {
    return c <= 0.04045f ? c / 12.92f : pow((c + 0.055f) / 1.055f, 2.4f);
}
TVLM_OVERLAY_FN float overlay_linear_to_srgb(float c) {
    return c <= 0.0031308f ? c * 12.92f : 1.055f * pow(c, 1.0f / 2.4f) - 0.055f;
}

// Channel c of colour `rgba` premultiplied by its alpha and `coverage`; colour channels
// in linear light where the frame is sRGB (c == 3: the alpha itself).
TVLM_OVERLAY_FN float overlay_premultiplied(uint rgba, uint c, float coverage, uint srgb) {
    const float alpha = overlay_channel(rgba, 3u) * coverage;
    if (c == 3u) return alpha;
    const float value = overlay_channel(rgba, c);
    return (srgb != 0u ? overlay_srgb_to_linear(value) : value) * alpha;
}

// A glyph's coverage of a pixel from its SDF sample (bilinear, 0-255) and the atlas texels
// per frame pixel: the distance to the edge, in frame pixels, through the one-pixel ramp.
TVLM_OVERLAY_FN float overlay_glyph_coverage(float sdf, float texels_per_pixel) {
    const float texels_outside = (float(TVLM_OVERLAY_SDF_ON_EDGE) - sdf) / float(TVLM_OVERLAY_SDF_PER_TEXEL);
    return overlay_coverage(texels_outside / texels_per_pixel);
}

// Where a glyph samples its atlas for the pixel centred at (px, py): the continuous texel
// coordinate, clamped inside the glyph's SDF (whose padding is outside every glyph).
struct OverlayAtlasPoint {
    float x;
    float y;
};
TVLM_OVERLAY_FN OverlayAtlasPoint overlay_glyph_atlas_point(OverlayShape s, float px, float py) {
    OverlayAtlasPoint a;
    const float w = (s.x1 - s.x0) * s.radius, h = (s.y1 - s.y0) * s.radius;
    a.x = s.cx + clamp((px - s.x0) * s.radius, 0.5f, max(0.5f, w - 0.5f)) - 0.5f;
    a.y = s.cy + clamp((py - s.y0) * s.radius, 0.5f, max(0.5f, h - 0.5f)) - 0.5f;
    return a;
}

// Bilinear interpolation of four taps (t00 at the lower corner) at fractions (fx, fy).
TVLM_OVERLAY_FN float overlay_bilinear(float t00, float t10, float t01, float t11, float fx, float fy) {
    return (t00 * (1.0f - fx) + t10 * fx) * (1.0f - fy) + (t01 * (1.0f - fx) + t11 * fx) * fy;
}

// The atlas texels a glyph's pixel reads: the lower corner of its four taps and the
// fractions between them. Each renderer fetches the four bytes from its own copy of the
// atlas and passes them, with these fractions, to overlay_glyph_coverage_of.
struct OverlayAtlasTaps {
    uint x;
    uint y;
    float fx;
    float fy;
};
TVLM_OVERLAY_FN OverlayAtlasTaps overlay_glyph_taps(OverlayShape s, float px, float py) {
    const OverlayAtlasPoint a = overlay_glyph_atlas_point(s, px, py);
    OverlayAtlasTaps t;
    t.x = uint(floor(a.x));
    t.y = uint(floor(a.y));
    t.fx = a.x - floor(a.x);
    t.fy = a.y - floor(a.y);
    return t;
}
TVLM_OVERLAY_FN float overlay_glyph_coverage_of(OverlayShape s, OverlayAtlasTaps t, float t00, float t10, float t01,
                                                float t11) {
    return overlay_glyph_coverage(overlay_bilinear(t00, t10, t01, t11, t.fx, t.fy), s.radius);
}

// Whether the shape's bounds touch the pixel rectangle [x0, x1) x [y0, y1).
TVLM_OVERLAY_FN bool overlay_touches(OverlayShape s, float x0, float y0, float x1, float y1) {
    return s.max_x >= x0 && s.min_x < x1 && s.max_y >= y0 && s.min_y < y1;
}

// Whether every pixel centre of [x0, x1) x [y0, y1) lies further inside box s than its
// stroke and the one-pixel ramp: fill coverage 1, stroke 0 there. Conservative: a
// rectangle within max(r, stroke + 0.5) of the edge (and a hundredth of a pixel for
// rounding) is not; where |x| and |y| stay r inside the half size, the rounded box's
// distance is max(|x| - hx, |y| - hy).
TVLM_OVERLAY_FN bool overlay_box_interior_covers(OverlayShape s, float x0, float y0, float x1, float y1) {
    if (s.kind != TVLM_SHAPE_BOX) return false;
    const float r = min(s.radius, min(s.x1, s.y1));
    const float margin = max(r, 0.5f + 2.0f * s.half_width) + 0.01f;
    const float hx = s.x1 - margin, hy = s.y1 - margin;
    return x0 + 0.5f - s.x0 >= -hx && x1 - 0.5f - s.x0 <= hx && y0 + 0.5f - s.y0 >= -hy && y1 - 0.5f - s.y0 <= hy;
}

// Whether box s draws nothing on the tile of pixels [x0, x1) x [y0, y1): its fill is
// transparent and the tile lies in its interior (above), so an outlined box costs the tiles
// along its edge, not those of its area.
TVLM_OVERLAY_FN bool overlay_box_hollow_over(OverlayShape s, float x0, float y0, float x1, float y1) {
    return (s.fill >> 24u) == 0u && overlay_box_interior_covers(s, x0, y0, x1, y1);
}

// Whether shape s draws nothing on the pixels [x0, x1) x [y0, y1) (a tile, or a block of
// one), so binning leaves the pair out and the cost follows coverage, not bounding boxes:
// inside an outlined box (above), or too far from a line or curve for any pixel of the
// rectangle to reach its one-pixel ramp. Distances change by at most the distance moved,
// and the rectangle's pixel centres lie within half its diagonal less a pixel of its
// centre; half a pixel more allows for the rounding of the curve's distance. (A
// butt-capped line's rectangle lies within half its width of the segment, so the
// segment's distance bounds it too.)
TVLM_OVERLAY_FN bool overlay_rect_empty(OverlayShape s, float x0, float y0, float x1, float y1) {
    const float cx = 0.5f * (x0 + x1), cy = 0.5f * (y0 + y1);
    const float corner = 0.5f * sqrt((x1 - x0 - 1.0f) * (x1 - x0 - 1.0f) + (y1 - y0 - 1.0f) * (y1 - y0 - 1.0f));
    const float reach = s.half_width + 0.5f + corner + 0.5f;
    if (s.kind == TVLM_SHAPE_SEGMENT) return overlay_segment_distance(cx, cy, s.x0, s.y0, s.x1, s.y1) > reach;
    if (s.kind == TVLM_SHAPE_CURVE) return overlay_bezier_distance(cx, cy, s.x0, s.y0, s.cx, s.cy, s.x1, s.y1) > reach;
    return overlay_box_hollow_over(s, x0, y0, x1, y1);
}
TVLM_OVERLAY_FN bool overlay_tile_empty(OverlayShape s, uint tx, uint ty) {
    const float x0 = float(tx * uint(TVLM_OVERLAY_TILE)), y0 = float(ty * uint(TVLM_OVERLAY_TILE));
    return overlay_rect_empty(s, x0, y0, x0 + float(TVLM_OVERLAY_TILE), y0 + float(TVLM_OVERLAY_TILE));
}

// The shape's coverage of the pixel centred at (px, py): .x the fill's (boxes), .y the
// stroke's or line's, as two floats (GLSL and C++ alike).
struct OverlayCoverage {
    float fill;
    float stroke;
};
TVLM_OVERLAY_FN OverlayCoverage overlay_shape_coverage(OverlayShape s, float px, float py) {
    OverlayCoverage c;
    c.fill = 0.0f;
    c.stroke = 0.0f;
    if (s.kind == TVLM_SHAPE_BOX) {
        const float r = min(s.radius, min(s.x1, s.y1));
        const float d = overlay_round_box_distance(px - s.x0, py - s.y0, s.x1, s.y1, r);
        const float outer = overlay_coverage(d), inner = overlay_coverage(d + 2.0f * s.half_width);
        c.fill = inner;
        c.stroke = outer - inner;
    } else if (s.kind == TVLM_SHAPE_SEGMENT) {
        if ((s.flags & TVLM_SHAPE_ROUND_CAPS) != 0u) {
            c.stroke = overlay_coverage(overlay_segment_distance(px, py, s.x0, s.y0, s.x1, s.y1) - s.half_width);
        } else {
            const float dx = s.x1 - s.x0, dy = s.y1 - s.y0, chord = sqrt(dx * dx + dy * dy);
            if (chord > 0.0f) {
                const float ux = dx / chord, uy = dy / chord;
                const float wx = px - 0.5f * (s.x0 + s.x1), wy = py - 0.5f * (s.y0 + s.y1);
                const float along = wx * ux + wy * uy, across = -wx * uy + wy * ux;
                c.stroke = overlay_coverage(
                    overlay_round_box_distance(along, across, 0.5f * chord, s.half_width, 0.0f));
            }
        }
    } else if (s.kind == TVLM_SHAPE_CURVE) {
        c.stroke = overlay_coverage(overlay_bezier_distance(px, py, s.x0, s.y0, s.cx, s.cy, s.x1, s.y1) - s.half_width);
    }
    return c;  // glyphs: the renderer samples the atlas (overlay_glyph_coverage)
}

// A pixel while shapes are composited onto it: premultiplied, in the blending space
// (linear light for sRGB frames). The frame's own bytes count as premultiplied (for the
// usual opaque frames that changes nothing).
struct OverlayPixel {
    float r;
    float g;
    float b;
    float a;
};

TVLM_OVERLAY_FN float overlay_decode(uint word, uint c, uint srgb) {
    const float v = overlay_channel(word, c);
    return (srgb != 0u && c != 3u) ? overlay_srgb_to_linear(v) : v;
}
TVLM_OVERLAY_FN OverlayPixel overlay_load(uint word, uint srgb) {
    OverlayPixel p;
    p.r = overlay_decode(word, 0u, srgb);
    p.g = overlay_decode(word, 1u, srgb);
    p.b = overlay_decode(word, 2u, srgb);
    p.a = overlay_decode(word, 3u, srgb);
    return p;
}
TVLM_OVERLAY_FN uint overlay_encode(float v, uint c, uint srgb) {
    v = clamp(v, 0.0f, 1.0f);
    if (srgb != 0u && c != 3u) v = overlay_linear_to_srgb(v);
    return uint(floor(v * 255.0f + 0.5f)) << (8u * c);
}
TVLM_OVERLAY_FN uint overlay_store(OverlayPixel p, uint srgb) {
    return overlay_encode(p.r, 0u, srgb) | overlay_encode(p.g, 1u, srgb) | overlay_encode(p.b, 2u, srgb) |
           overlay_encode(p.a, 3u, srgb);
}

// Colour `rgba` premultiplied by its opacity, in the blending space (colour channels in
// linear light where the frame is sRGB): what a shape composites at coverage 1. A renderer
// may compute it once per shape rather than per pixel (the CUDA shading does, per tile).
TVLM_OVERLAY_FN OverlayPixel overlay_premultiply(uint rgba, uint srgb) {
    OverlayPixel p;
    p.r = overlay_premultiplied(rgba, 0u, 1.0f, srgb);
    p.g = overlay_premultiplied(rgba, 1u, 1.0f, srgb);
    p.b = overlay_premultiplied(rgba, 2u, 1.0f, srgb);
    p.a = overlay_premultiplied(rgba, 3u, 1.0f, srgb);
    return p;
}

// A shape's premultiplied fill and stroke (or line) colours, scaled by their coverage, as
// one source "over" the pixel.
TVLM_OVERLAY_FN OverlayPixel overlay_over_premultiplied(OverlayPixel dst, OverlayPixel fill, OverlayPixel stroke,
                                                        OverlayCoverage c) {
    const float sa = fill.a * c.fill + stroke.a * c.stroke;
    OverlayPixel result;
    result.r = fill.r * c.fill + stroke.r * c.stroke + dst.r * (1.0f - sa);
    result.g = fill.g * c.fill + stroke.g * c.stroke + dst.g * (1.0f - sa);
    result.b = fill.b * c.fill + stroke.b * c.stroke + dst.b * (1.0f - sa);
    result.a = sa + dst.a * (1.0f - sa);
    return result;
}

// Shape s "over" the pixel: its fill and stroke (or line), premultiplied by their
// coverage, as one source.
TVLM_OVERLAY_FN OverlayPixel overlay_over(OverlayPixel dst, OverlayShape s, OverlayCoverage c, uint srgb) {
    return overlay_over_premultiplied(dst, overlay_premultiply(s.fill, srgb), overlay_premultiply(s.stroke, srgb), c);
}

#ifdef __cplusplus
// Building shape records: C++ and CUDA only (the shaders only read them).

// Fills s's bounds from the extent [x0, x1] x [y0, y1] grown by the one-pixel antialiasing
// ramp and clipped to the frame; false where nothing of it lies on the frame.
TVLM_OVERLAY_FN bool overlay_clip_bounds(OverlayShape& s, float x0, float y0, float x1, float y1, uint width,
                                         uint height) {
    const float grow = 1.0f;
    s.min_x = max(x0 - grow, 0.0f);
    s.min_y = max(y0 - grow, 0.0f);
    s.max_x = min(x1 + grow, float(width) - 0.5f);
    s.max_y = min(y1 + grow, float(height) - 0.5f);
    return s.min_x <= s.max_x && s.min_y <= s.max_y;
}

// A segment or curve record (kind) from (x0, y0) to (x1, y1), `width` wide, in colour
// `rgba`; flags, control point and bounds to be filled.
TVLM_OVERLAY_FN OverlayShape overlay_line_shape(uint kind, float x0, float y0, float x1, float y1, float width,
                                                uint rgba) {
    OverlayShape s{};
    s.kind = kind;
    s.x0 = x0;
    s.y0 = y0;
    s.x1 = x1;
    s.y1 = y1;
    s.half_width = 0.5f * width;
    s.stroke = rgba;
    return s;
}

// A curved link from (x0, y0) to (x1, y1), `width` wide, in colour `rgba`: a quadratic
// Bezier whose control point is the midpoint moved 0.3 of the length along the left normal
// (the design document's rule), with its bounds (the curve lies in its control triangle);
// false where nothing of it lies on the frame.
TVLM_OVERLAY_FN bool overlay_curve_shape(OverlayShape& s, float x0, float y0, float x1, float y1, float width,
                                         uint rgba, uint frame_width, uint frame_height) {
    s = overlay_line_shape(TVLM_SHAPE_CURVE, x0, y0, x1, y1, width, rgba);
    s.flags = TVLM_SHAPE_ROUND_CAPS;
    s.cx = 0.5f * (x0 + x1) - 0.3f * (y1 - y0);
    s.cy = 0.5f * (y0 + y1) + 0.3f * (x1 - x0);
    const float h = s.half_width;
    return overlay_clip_bounds(s, min(min(x0, x1), s.cx) - h, min(min(y0, y1), s.cy) - h, max(max(x0, x1), s.cx) + h,
                               max(max(y0, y1), s.cy) + h, frame_width, frame_height);
}

static_assert(sizeof(OverlayShape) == 64, "std430 layout must match GLSL");
static_assert(sizeof(OverlayParams) == 32, "push constant layout must match GLSL");
}  // namespace tvlm::gpu
#endif

#endif
