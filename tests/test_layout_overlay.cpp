// A patch layout as an overlay scene (what the --viz outputs draw): one outlined box per
// real patch over its footprint, coloured by level, padding slots left out, a cross of
// two lines per fixation; drawn, it marks the patches' edges and leaves their insides.
#include <doctest/doctest.h>

#include <vector>

#include "engine/overlay/layout_overlay.h"
#include "engine/overlay/overlay_reference.h"
#include "engine/sampling/patch_layouts.h"

namespace tvlm {
namespace {

TEST_CASE("a patch layout becomes boxes over its footprints and crosses at its fixations") {
    const FoveatedLayout foveated = foveated_layout(256, 192, {.budget = 40, .patch_size = 8});
    const PatchLayout& layout = foveated.layout;
    size_t real = 0;
    for (const Patch& p : layout.patches) real += p.level >= 0;
    const std::vector<Fixation> fixations{{0.25, 0.5}};
    const OverlayScene scene = layout_overlay(layout, 0, 256, 192, fixations);
    REQUIRE(scene.boxes.size() == real);
    CHECK(scene.lines.size() == 2);
    size_t b = 0;
    for (const Patch& p : layout.patches) {
        if (p.level < 0) continue;
        const OverlayBox& box = scene.boxes[b++];
        CHECK(box.cx == doctest::Approx(p.cu * 256));
        CHECK(box.height == doctest::Approx(p.sv * 192));
        CHECK(box.fill.a == 0);
        if (p.level == 0) CHECK((box.stroke.b == 255 && box.stroke.r == 0));  // finest: blue
    }
    // Drawn over a black picture: a patch's corner pixel is lit, its centre is not.
    std::vector<uint8_t> rgba(256 * 192 * 4, 0);
    draw_overlay_reference(overlay_shapes(scene, 256, 192), rgba, 256, 192, false);
    const Patch& p = layout.patches[0];
    const auto lit = [&](double u, double v) {
        const size_t at = (size_t(v * 192) * 256 + size_t(u * 256)) * 4;
        return rgba[at] + rgba[at + 1] + rgba[at + 2] > 0;
    };
    CHECK(lit(p.cu - p.su / 2 + 0.5 / 256, p.cv - p.sv / 2 + 0.5 / 192));
    if (p.su * 256 > 8) CHECK_FALSE(lit(p.cu, p.cv));
}

}  // namespace
}  // namespace tvlm
