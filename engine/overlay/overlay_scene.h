#pragma once
// What an overlay draws (issue 19): rounded boxes, points, straight lines and curved links,
// in pixels of the frame, and the shape records every renderer reads (shaders/overlay_shapes.h).
// Compositing order: boxes, then lines, trails, curves, points, then labels (each over
// its background), each in the order given;
// a later shape goes over an earlier one.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/textures/format.h"
#include "shaders/overlay_shapes.h"

namespace tvlm {

struct OverlayColor {
    uint8_t r = 0, g = 0, b = 0, a = 255;  // straight (not premultiplied); a is the opacity
    uint32_t word() const { return uint32_t(r) | uint32_t(g) << 8 | uint32_t(b) << 16 | uint32_t(a) << 24; }
};

struct OverlayBox {
    float cx = 0, cy = 0, width = 0, height = 0;  // centre and size
    float radius = 0;                             // corner radius (roundness), at most half the shorter side
    float stroke_width = 2;                       // drawn inside the box's edge; wider than the box: all stroke
    OverlayColor stroke{255, 255, 255, 255};
    OverlayColor fill{0, 0, 0, 0};  // transparent: outline only
};

struct OverlayPoint {
    float x = 0, y = 0, radius = 3;
    OverlayColor color{255, 255, 255, 255};
};

struct OverlayLine {
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0, width = 2;
    bool round_caps = true;  // false: butt caps (the line ends at its endpoints)
    OverlayColor color{255, 255, 255, 255};
};

// A curved link: a quadratic Bezier whose control point lies on the normal of the segment
// through its midpoint, 0.3 of its length to the left of (x0, y0) -> (x1, y1) (the design
// document's rule). Round caps.
struct OverlayCurve {
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0, width = 2;
    OverlayColor color{255, 255, 255, 255};
};

// A track's trail: a polyline through its last positions (oldest first) whose segments
// fade from transparent at the oldest to the colour's opacity at the newest. Segments
// have round caps, so translucent trails show a bead where two meet.
struct OverlayTrail {
    std::vector<float> xy;  // x0, y0, x1, y1, ...: at least two positions to draw anything
    float width = 2;
    OverlayColor color{255, 255, 255, 255};
};

// A text label (a class name, a score): UTF-8 text of which printable ASCII is drawn (every
// other character shows as one '?'), `size`
// pixels from the top of a line to the next, its top-left at (x, y), over a background
// box. Drawn from the font's signed-distance atlas (overlay_font.h), so any size is sharp.
struct OverlayLabel {
    float x = 0, y = 0, size = 16;
    std::string text;
    OverlayColor color{255, 255, 255, 255};
    OverlayColor background{0, 0, 0, 160};  // transparent: no box
};

struct OverlayScene {
    std::vector<OverlayBox> boxes;
    std::vector<OverlayPoint> points;
    std::vector<OverlayLine> lines;
    std::vector<OverlayCurve> curves;
    std::vector<OverlayTrail> trails;
    std::vector<OverlayLabel> labels;
};

// The glyphs a label draws: each UTF-8 character of `text` (a malformed byte counts as one)
// becomes itself where it is printable ASCII, else one '?'.
std::string label_glyphs(std::string_view text);

// The scene's shapes for a width x height frame, in compositing order, bounds clipped to
// the frame; shapes that cover no pixel of it (outside, zero size or width, transparent)
// are left out. Throws Error for NaN or infinite coordinates, negative sizes, widths or
// radii, a trail with an odd number of coordinates, labels where the build has no font, an
// empty frame, or more than kMaxOverlayShapes shapes. `curves_end`: where the curves' shapes
// end (links computed on the GPU go there, after the scene's curves and before its points).
inline constexpr size_t kMaxOverlayShapes = size_t{1} << 20;
std::vector<gpu::OverlayShape> overlay_shapes(const OverlayScene& scene, uint32_t width, uint32_t height,
                                              size_t* curves_end = nullptr);

// What every renderer checks before drawing `shapes` over a width x height frame: their
// bounds lie on it (overlay_shapes() for this frame made them). Returns the number of
// (shape, tile) pairs the bounds touch, at least the tiles' lists' length
// (binning leaves out tiles inside outlined boxes). Throws Error otherwise, or beyond
// 2^31 pairs.
uint64_t overlay_tile_pairs(std::span<const gpu::OverlayShape> shapes, uint32_t width, uint32_t height);

// The frame formats every renderer draws on: RGBA8 (UNORM, or sRGB blended in linear light)
// and RGBA16F (blended as stored). Throws Error, naming `who` and the format, for others.
void check_overlay_format(Format format, std::string_view who);

}  // namespace tvlm
