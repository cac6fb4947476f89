// The shared shape arithmetic (shaders/overlay_shapes.h) on its own: the tiles that binning
// leaves out inside outlined boxes must be tiles where the box draws nothing, at every
// pixel; and the test must see such tiles (big outlined boxes have them).
#include <doctest/doctest.h>

#include <random>

#include "overlay/overlay_scene.h"
#include "overlay_shapes.h"

namespace tvlm {
namespace {

TEST_CASE("tiles binning leaves out inside outlined boxes are tiles where the box draws nothing") {
    std::mt19937 random(11);
    std::uniform_real_distribution<float> at(0.0f, 400.0f), side(0.0f, 300.0f), radius(0.0f, 80.0f), stroke(0.5f, 40.0f);
    size_t hollow = 0, kept = 0;
    for (int i = 0; i < 200; ++i) {
        const OverlayBox box{at(random), at(random), side(random), side(random), radius(random), stroke(random),
                             {255, 0, 0, 255}, i % 7 == 0 ? OverlayColor{0, 0, 255, 1} : OverlayColor{0, 0, 0, 0}};
        const std::vector<gpu::OverlayShape> shapes = overlay_shapes({.boxes = {box}}, 512, 512);
        if (shapes.empty()) continue;
        const gpu::OverlayShape& s = shapes[0];
        for (uint32_t ty = 0; ty < 512 / TVLM_OVERLAY_TILE; ++ty)
            for (uint32_t tx = 0; tx < 512 / TVLM_OVERLAY_TILE; ++tx) {
                if (!gpu::overlay_tile_hollow(s, tx, ty)) {
                    ++kept;
                    continue;
                }
                ++hollow;
                CHECK(box.fill.a == 0);  // a visible fill is never left out
                bool draws_nothing = true;  // full fill coverage (transparent) and no stroke, at every pixel
                for (uint32_t y = ty * TVLM_OVERLAY_TILE; y < (ty + 1) * TVLM_OVERLAY_TILE; ++y)
                    for (uint32_t x = tx * TVLM_OVERLAY_TILE; x < (tx + 1) * TVLM_OVERLAY_TILE; ++x) {
                        const gpu::OverlayCoverage c = gpu::overlay_shape_coverage(s, float(x) + 0.5f, float(y) + 0.5f);
                        draws_nothing = draws_nothing && c.stroke == 0.0f && c.fill == 1.0f;
                    }
                CAPTURE(i);
                CAPTURE(tx);
                CAPTURE(ty);
                CHECK(draws_nothing);
            }
    }
    CHECK(hollow > 1000);  // the case was exercised
    CHECK(kept > hollow);
}

}  // namespace
}  // namespace tvlm
