#include "apps/bench/overlay_scenes.h"

#include <algorithm>
#include <chrono>

namespace tvlm {

void add_boxes(OverlayScene& scene, size_t count, bool labels, std::mt19937& random) {
    std::uniform_real_distribution<float> x(0, kWidth), y(0, kHeight), side(40, 300);
    for (size_t i = 0; i < count; ++i) {
        const OverlayBox box{
            x(random), y(random), side(random),       side(random),
            8,         3,         {255, 80, 80, 255}, i % 3 ? OverlayColor{0, 0, 0, 0} : OverlayColor{255, 80, 80, 60}};
        scene.boxes.push_back(box);
        if (labels)
            scene.labels.push_back({box.cx - box.width / 2,
                                    box.cy - box.height / 2 - 20,
                                    20,
                                    i % 2 ? "person 0.97" : "car 0.81",
                                    {255, 255, 255, 255},
                                    {255, 80, 80, 200}});
    }
}

std::vector<KnnPoint> add_points(OverlayScene& scene, size_t count, std::mt19937& random) {
    std::uniform_real_distribution<float> x(0, kWidth), y(0, kHeight);
    std::vector<KnnPoint> points;
    for (size_t i = 0; i < count; ++i) {
        points.push_back({x(random), y(random), i});
        scene.points.push_back({points.back().x, points.back().y, 5, {255, 255, 0, 255}});
    }
    return points;
}

double add_links(OverlayScene& scene, const std::vector<KnnPoint>& points, uint32_t k, double* min_us) {
    std::vector<double> us;
    for (int run = 0; run < 15; ++run) {
        KnnGraph graph({.k = k});
        const auto start = std::chrono::steady_clock::now();
        graph.update(points);
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
    std::vector<uint64_t> tracks;
    for (const KnnPoint& p : points) tracks.push_back(p.track);
    KnnGraph graph({.k = k});
    link_points(scene, tracks, graph);
    std::sort(us.begin(), us.end());
    *min_us = us.front();
    return us[us.size() / 2];
}

}  // namespace tvlm
