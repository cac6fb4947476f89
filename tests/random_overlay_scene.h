#pragma once
// Random overlay scenes and frames for the renderers' tests (Vulkan and CUDA): boxes across
// the frame's edges, zero-size and huge boxes, strokes wider than boxes, lines with both
// caps, zero-length ones, curves with coincident endpoints, points; translucent colours.
#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "engine/textures/half.h"
#include "engine/overlay/overlay_reference.h"
#include "engine/overlay/overlay_scene.h"

namespace tvlm::test {

inline OverlayColor random_color(std::mt19937& random, bool translucent) {
    std::uniform_int_distribution<int> byte(0, 255);
    return {uint8_t(byte(random)), uint8_t(byte(random)), uint8_t(byte(random)),
            uint8_t(translucent ? byte(random) : 255)};
}

// `labels`: also text labels of random sizes (the Vulkan and CPU renderers draw them).
inline OverlayScene random_scene(uint32_t w, uint32_t h, std::mt19937& random, bool labels = false) {
    std::uniform_real_distribution<float> x(-30.0f, float(w) + 30.0f), y(-30.0f, float(h) + 30.0f), size(0.0f, 60.0f),
        width(0.5f, 9.0f);
    OverlayScene scene;
    for (int i = 0; i < 40; ++i) {
        OverlayBox b{x(random),
                     y(random),
                     size(random),
                     size(random),
                     size(random) * 0.3f,
                     width(random),
                     random_color(random, true),
                     random_color(random, i % 3 == 0)};
        if (i % 10 == 0) b.stroke_width = 80;  // wider than the box: all stroke
        if (i == 5) b.width = 0;               // zero size: nothing
        if (i == 7) b = {float(w) / 2, float(h) / 2, 10000, 10000, 0, 3, random_color(random, true), {}};  // huge
        scene.boxes.push_back(b);
    }
    for (int i = 0; i < 3; ++i)  // outlined (transparent fill) and big: binning leaves their inner tiles out
        scene.boxes.push_back({x(random),
                               y(random),
                               60 + 2 * size(random),
                               60 + 2 * size(random),
                               size(random) * 0.5f,
                               width(random),
                               random_color(random, true),
                               {}});
    for (int i = 0; i < 2; ++i)  // filled and big: the CUDA shading composites their inner tiles' fill as a constant
        scene.boxes.push_back({x(random), y(random), 60 + 2 * size(random), 60 + 2 * size(random), size(random) * 0.5f,
                               width(random), random_color(random, true), random_color(random, true)});
    for (int i = 0; i < 30; ++i) {
        OverlayLine l{
            x(random), y(random), x(random), y(random), width(random), i % 2 == 0, random_color(random, true)};
        if (i % 7 == 0) l.x1 = l.x0, l.y1 = l.y0;  // zero length: a dot (round caps) or nothing (butt)
        scene.lines.push_back(l);
    }
    for (int i = 0; i < 20; ++i) {
        OverlayCurve c{x(random), y(random), x(random), y(random), width(random), random_color(random, true)};
        if (i % 5 == 0) c.x1 = c.x0, c.y1 = c.y0;  // coincident endpoints
        scene.curves.push_back(c);
    }
    for (int i = 0; i < 5; ++i) {  // trails of 6 positions, fading
        OverlayTrail t{{}, width(random), random_color(random, false)};
        for (int k = 0; k < 6; ++k) t.xy.push_back(x(random)), t.xy.push_back(y(random));
        scene.trails.push_back(t);
    }
    for (int i = 0; labels && i < 8; ++i)
        scene.labels.push_back({x(random), y(random), 6 + size(random) * 0.5f,
                                i % 2 ? "person 0.97" : "car ~!@#$%^&*()_+?", random_color(random, true),
                                random_color(random, i % 3 != 0)});
    for (int i = 0; i < 30; ++i)
        scene.points.push_back({x(random), y(random), size(random) * 0.2f, random_color(random, true)});
    return scene;
}

inline std::vector<uint8_t> random_frame(uint32_t w, uint32_t h, std::mt19937& random) {
    std::vector<uint8_t> frame(size_t{w} * h * 4);
    for (size_t i = 0; i < frame.size(); ++i) frame[i] = i % 4 == 3 ? 255 : uint8_t(random());
    return frame;
}

// A GPU renderer's RGBA8 result against the CPU reference drawn over the same frame
// (`before`): the largest byte difference, and how many bytes the reference changed (so a
// test can check the scene drew at all).
struct OverlayComparison {
    int worst = 0;
    size_t changed = 0;
};
inline OverlayComparison compare_with_reference(const std::vector<uint8_t>& before, const std::vector<uint8_t>& gpu,
                                                const std::vector<gpu::OverlayShape>& shapes, uint32_t w, uint32_t h,
                                                bool srgb) {
    std::vector<uint8_t> reference = before;
    draw_overlay_reference(shapes, reference, w, h, srgb);
    OverlayComparison c;
    for (size_t i = 0; i < gpu.size(); ++i) {
        c.worst = std::max(c.worst, std::abs(int{gpu[i]} - int{reference[i]}));
        c.changed += reference[i] != before[i];
    }
    return c;
}

// An RGBA16F frame of random values in [0, 1), as halves.
inline std::vector<uint16_t> random_frame_f16(uint32_t w, uint32_t h, std::mt19937& random) {
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<uint16_t> frame(size_t{w} * h * 4);
    for (uint16_t& v : frame) v = float_to_half(unit(random));
    return frame;
}

// The same comparison for RGBA16F frames: the largest difference in 8-bit steps (rounded up).
inline OverlayComparison compare_with_reference_f16(const std::vector<uint16_t>& before,
                                                    const std::vector<uint16_t>& gpu,
                                                    const std::vector<gpu::OverlayShape>& shapes, uint32_t w,
                                                    uint32_t h) {
    std::vector<uint16_t> reference = before;
    draw_overlay_reference_f16(shapes, reference, w, h);
    OverlayComparison c;
    double worst = 0;
    for (size_t i = 0; i < gpu.size(); ++i) {
        worst = std::max(worst, double(std::fabs(half_to_float(gpu[i]) - half_to_float(reference[i]))));
        c.changed += reference[i] != before[i];
    }
    c.worst = int(std::ceil(worst * 255));
    return c;
}

}  // namespace tvlm::test
