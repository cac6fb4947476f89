// The shared shape arithmetic (shaders/overlay_shapes.h) on its own: the tiles binning
// leaves out (inside outlined boxes, away from lines and curves) must be tiles where the
// shape changes no pixel, and tiles a box's interior covers must have fill coverage exactly
// 1 and no stroke at every pixel; and the test must see many such tiles.
#include <doctest/doctest.h>

#include <random>

#include "overlay/overlay_scene.h"
#include "overlay_shapes.h"

namespace tvlm {
namespace {

TEST_CASE("tiles binning leaves out are tiles where the shape changes no pixel") {
    std::mt19937 random(11);
    std::uniform_real_distribution<float> at(-50.0f, 560.0f), side(0.0f, 300.0f), radius(0.0f, 80.0f),
        width(0.5f, 40.0f);
    size_t left_out[3] = {}, kept = 0, covered = 0;
    for (int i = 0; i < 300; ++i) {
        OverlayScene scene;
        const bool visible_fill = i % 7 == 0;
        if (i % 3 == 0)
            scene.boxes.push_back({at(random), at(random), side(random), side(random), radius(random), width(random),
                                   {255, 0, 0, 255}, visible_fill ? OverlayColor{0, 0, 255, 1} : OverlayColor{0, 0, 0, 0}});
        else if (i % 3 == 1)
            scene.lines.push_back({at(random), at(random), at(random), at(random), width(random) * 0.25f, i % 2 == 0});
        else {
            OverlayCurve c{at(random), at(random), at(random), at(random), width(random) * 0.25f};
            if (i % 11 == 2) c.x1 = c.x0, c.y1 = c.y0;  // coincident endpoints: a dot
            scene.curves.push_back(c);
        }
        const std::vector<gpu::OverlayShape> shapes = overlay_shapes(scene, 512, 512);
        for (const gpu::OverlayShape& s : shapes)
            for (uint32_t ty = 0; ty < 512 / TVLM_OVERLAY_TILE; ++ty)
                for (uint32_t tx = 0; tx < 512 / TVLM_OVERLAY_TILE; ++tx) {
                    const float x0 = float(tx * TVLM_OVERLAY_TILE), y0 = float(ty * TVLM_OVERLAY_TILE);
                    if (gpu::overlay_box_interior_covers(s, x0, y0, x0 + TVLM_OVERLAY_TILE, y0 + TVLM_OVERLAY_TILE)) {
                        ++covered;  // the CUDA shading composites the fill there without coverage: it must be exactly 1
                        bool exact = true;
                        for (uint32_t y = ty * TVLM_OVERLAY_TILE; y < (ty + 1) * TVLM_OVERLAY_TILE; ++y)
                            for (uint32_t x = tx * TVLM_OVERLAY_TILE; x < (tx + 1) * TVLM_OVERLAY_TILE; ++x) {
                                const gpu::OverlayCoverage c = gpu::overlay_shape_coverage(s, float(x) + 0.5f, float(y) + 0.5f);
                                exact = exact && c.fill == 1.0f && c.stroke == 0.0f;
                            }
                        CAPTURE(i);
                        CHECK(exact);
                    }
                    if (!gpu::overlay_tile_empty(s, tx, ty)) {
                        ++kept;
                        continue;
                    }
                    ++left_out[s.kind];
                    bool changes_nothing = true;  // no stroke; a fill only where it is transparent
                    for (uint32_t y = ty * TVLM_OVERLAY_TILE; y < (ty + 1) * TVLM_OVERLAY_TILE; ++y)
                        for (uint32_t x = tx * TVLM_OVERLAY_TILE; x < (tx + 1) * TVLM_OVERLAY_TILE; ++x) {
                            const gpu::OverlayCoverage c = gpu::overlay_shape_coverage(s, float(x) + 0.5f, float(y) + 0.5f);
                            changes_nothing = changes_nothing && c.stroke == 0.0f && (c.fill == 0.0f || (s.fill >> 24) == 0);
                        }
                    CAPTURE(i);
                    CAPTURE(tx);
                    CAPTURE(ty);
                    CHECK(changes_nothing);
                }
    }
    CHECK(left_out[TVLM_SHAPE_BOX] > 500);  // each case was exercised
    CHECK(covered > 500);
    CHECK(left_out[TVLM_SHAPE_SEGMENT] > 1000);
    CHECK(left_out[TVLM_SHAPE_CURVE] > 1000);
    CHECK(kept > 1000);
}

}  // namespace
}  // namespace tvlm
