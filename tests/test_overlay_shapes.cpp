// The shared shape arithmetic (shaders/overlay_shapes.h) on its own: the tiles (and the
// CUDA shading's 8x4 pixel blocks) binning leaves out (inside outlined boxes, away from
// lines and curves) must be ones where the shape changes no pixel, and those a box's
// interior covers must have fill coverage exactly 1 and no stroke at every pixel; and the
// test must see many of each.
#include <doctest/doctest.h>

#include <random>

#include "engine/overlay/overlay_scene.h"
#include "shaders/overlay_shapes.h"

namespace tvlm {
namespace {

// Every w x h rectangle of a 512x512 frame against shape s: the interior's exact coverage
// where a box's interior covers it, and no changed pixel where it is left out (`empty`).
struct RectCounts {
    size_t left_out[3] = {}, kept = 0, covered = 0;
};
template <class Empty>
void check_rects(const gpu::OverlayShape& s, uint32_t w, uint32_t h, const Empty& empty, RectCounts& counts) {
    for (uint32_t ry = 0; ry < 512 / h; ++ry)
        for (uint32_t rx = 0; rx < 512 / w; ++rx) {
            const float x0 = float(rx * w), y0 = float(ry * h);
            if (gpu::overlay_box_interior_covers(s, x0, y0, x0 + float(w), y0 + float(h))) {
                ++counts.covered;  // the CUDA shading composites the fill there without coverage: it must be exactly 1
                bool exact = true;
                for (uint32_t y = ry * h; y < (ry + 1) * h; ++y)
                    for (uint32_t x = rx * w; x < (rx + 1) * w; ++x) {
                        const gpu::OverlayCoverage c = gpu::overlay_shape_coverage(s, float(x) + 0.5f, float(y) + 0.5f);
                        exact = exact && c.fill == 1.0f && c.stroke == 0.0f;
                    }
                CHECK(exact);
            }
            if (!empty(rx, ry, x0, y0)) {
                ++counts.kept;
                continue;
            }
            ++counts.left_out[s.kind];
            bool changes_nothing = true;  // no stroke; a fill only where it is transparent
            for (uint32_t y = ry * h; y < (ry + 1) * h; ++y)
                for (uint32_t x = rx * w; x < (rx + 1) * w; ++x) {
                    const gpu::OverlayCoverage c = gpu::overlay_shape_coverage(s, float(x) + 0.5f, float(y) + 0.5f);
                    changes_nothing = changes_nothing && c.stroke == 0.0f && (c.fill == 0.0f || (s.fill >> 24) == 0);
                }
            CAPTURE(rx);
            CAPTURE(ry);
            CHECK(changes_nothing);
        }
}

TEST_CASE("tiles and 8x4 blocks binning leaves out are ones where the shape changes no pixel") {
    std::mt19937 random(11);
    std::uniform_real_distribution<float> at(-50.0f, 560.0f), side(0.0f, 300.0f), radius(0.0f, 80.0f),
        width(0.5f, 40.0f);
    RectCounts tiles, blocks;
    for (int i = 0; i < 300; ++i) {
        OverlayScene scene;
        const bool visible_fill = i % 7 == 0;
        if (i % 3 == 0)
            scene.boxes.push_back({at(random),
                                   at(random),
                                   side(random),
                                   side(random),
                                   radius(random),
                                   width(random),
                                   {255, 0, 0, 255},
                                   visible_fill ? OverlayColor{0, 0, 255, 1} : OverlayColor{0, 0, 0, 0}});
        else if (i % 3 == 1)
            scene.lines.push_back({at(random), at(random), at(random), at(random), width(random) * 0.25f, i % 2 == 0});
        else {
            OverlayCurve c{at(random), at(random), at(random), at(random), width(random) * 0.25f};
            if (i % 11 == 2) c.x1 = c.x0, c.y1 = c.y0;  // coincident endpoints: a dot
            scene.curves.push_back(c);
        }
        CAPTURE(i);
        for (const gpu::OverlayShape& s : overlay_shapes(scene, 512, 512)) {
            check_rects(
                s, TVLM_OVERLAY_TILE, TVLM_OVERLAY_TILE,
                [&](uint32_t tx, uint32_t ty, float, float) { return gpu::overlay_tile_empty(s, tx, ty); }, tiles);
            if (i % 3 != 2)  // the CUDA shading's pixel-warp blocks (curves are culled there by bounds only)
                check_rects(
                    s, 8, 4,
                    [&](uint32_t, uint32_t, float x0, float y0) {
                        return gpu::overlay_rect_empty(s, x0, y0, x0 + 8.0f, y0 + 4.0f);
                    },
                    blocks);
        }
    }
    CHECK(tiles.left_out[TVLM_SHAPE_BOX] > 500);  // each case was exercised
    CHECK(tiles.covered > 500);
    CHECK(tiles.left_out[TVLM_SHAPE_SEGMENT] > 1000);
    CHECK(tiles.left_out[TVLM_SHAPE_CURVE] > 1000);
    CHECK(tiles.kept > 1000);
    CHECK(blocks.left_out[TVLM_SHAPE_BOX] > 2000);
    CHECK(blocks.covered > 2000);
    CHECK(blocks.left_out[TVLM_SHAPE_SEGMENT] > 4000);
    CHECK(blocks.kept > 4000);
}

}  // namespace
}  // namespace tvlm

namespace tvlm {

TEST_CASE("a label draws one glyph per UTF-8 character, '?' for each one outside printable ASCII") {
    CHECK(label_glyphs("person 0.97") == "person 0.97");
    CHECK(label_glyphs("caf\xc3\xa9") == "caf?");                          // é: two bytes, one character
    CHECK(label_glyphs("\xe6\x97\xa5\xe6\x9c\xac") == "??");               // two CJK characters of three bytes
    CHECK(label_glyphs(std::string("a\xf0\x9f\x98\x80") + "b") == "a?b");  // an emoji of four bytes
    CHECK(label_glyphs("tab\there\n") == "tab?here?");                     // control characters
    CHECK(label_glyphs("\x80\xbf") == "??");                               // stray continuation bytes: one each
    CHECK(label_glyphs("\xc3") == "?");                                    // a character cut short at the end
    CHECK(label_glyphs(std::string("\xc3") + "A") == "?A");                // ... or before an ASCII byte
    CHECK(label_glyphs(" ~") == " ~");                                     // the printable range's two ends
    CHECK(label_glyphs("\x1f\x7f") == "??");                               // and one past each
    CHECK(label_glyphs("").empty());
}

}  // namespace tvlm
