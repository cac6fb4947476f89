// libFuzzer harness of the overlay scene parser (parse_overlay_scene: what `tvlm overlay
// --scene` and texturevlm.overlay read). Every input must parse or throw Error naming what
// is wrong; a parsed scene must be what the renderer may take: finite numbers within a
// float's range and one track per point. Built by tests/fuzz/CMakeLists.txt; .ci/fuzz runs it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/error.h"
#include "engine/overlay/overlay_scene_json.h"

namespace {

void check_finite(float v) {
    if (!std::isfinite(v)) __builtin_trap();  // the parser let a NaN or infinity through
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const tvlm::OverlaySceneFile file = tvlm::parse_overlay_scene(
            std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
        if (file.point_tracks.size() != file.scene.points.size()) __builtin_trap();
        for (const auto& b : file.scene.boxes) check_finite(b.cx), check_finite(b.cy), check_finite(b.width);
        for (const auto& p : file.scene.points) check_finite(p.x), check_finite(p.y), check_finite(p.radius);
        for (const auto& l : file.scene.lines) check_finite(l.x0), check_finite(l.y1), check_finite(l.width);
    } catch (const tvlm::Error&) {
        // Refusing is the expected outcome for almost every input.
    }
    return 0;
}
