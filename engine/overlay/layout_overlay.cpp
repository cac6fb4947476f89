#include "engine/overlay/layout_overlay.h"

#include <algorithm>
#include <cmath>

namespace tvlm {

OverlayScene layout_overlay(const PatchLayout& layout, uint32_t b, uint32_t width, uint32_t height,
                            std::span<const Fixation> fixations) {
    float max_level = 0;
    for (const Patch& p : layout.patches) max_level = std::max(max_level, p.level);
    OverlayScene scene;
    const size_t first = size_t{b} * layout.patches_per_image;
    for (size_t n = first; n < first + layout.patches_per_image && n < layout.patches.size(); ++n) {
        const Patch& p = layout.patches[n];
        if (p.level < 0) continue;  // a padding slot
        const float t = max_level > 0 ? std::clamp(p.level / max_level, 0.0f, 1.0f) : 0.0f;
        const auto byte = [](float v) { return uint8_t(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)); };
        const OverlayColor colour{byte(t), byte(1.0f - std::fabs(2.0f * t - 1.0f)), byte(1.0f - t), 255};
        scene.boxes.push_back({p.cu * float(width),
                               p.cv * float(height),
                               p.su * float(width),
                               p.sv * float(height),
                               0,
                               1.5f,
                               colour,
                               {0, 0, 0, 0}});
    }
    for (const Fixation& f : fixations) {  // a white cross, 9 pixels a side
        const float x = float(f.x) * float(width), y = float(f.y) * float(height);
        scene.lines.push_back({x - 9, y, x + 9, y, 2, false, {255, 255, 255, 255}});
        scene.lines.push_back({x, y - 9, x, y + 9, 2, false, {255, 255, 255, 255}});
    }
    return scene;
}

}  // namespace tvlm
