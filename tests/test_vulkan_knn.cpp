// The KNN graph's nearest neighbours on Vulkan compute against the CPU's: points on a
// 1/8-pixel grid (where float squared distances are exact, so the order is the same), a
// grid full of ties, fewer points than neighbours, and the graph built from either list.
#include <doctest/doctest.h>

#include <limits>
#include <random>
#include <vector>

#include "engine/error.h"
#include "engine/overlay/knn_graph.h"
#include "engine/overlay/vulkan_knn.h"
#include "tests/vulkan_fixture.h"

using namespace tvlm;
using namespace tvlm::test;

TEST_CASE_FIXTURE(VulkanFixture, "Vulkan nearest neighbours equal the CPU's, ties by index") {
    VulkanNearest gpu(context);
    std::mt19937 random(17);
    std::uniform_int_distribution<int> eighths(0, 800);
    std::vector<KnnPoint> points;
    for (uint64_t i = 0; i < 300; ++i) points.push_back({float(eighths(random)) / 8, float(eighths(random)) / 8, i});
    std::vector<KnnPoint> grid;
    for (uint32_t y = 0; y < 15; ++y)
        for (uint32_t x = 0; x < 20; ++x) grid.push_back({float(x) * 4, float(y) * 4, y * 20 + x});
    for (const std::vector<KnnPoint>* set : {&points, &grid})
        for (uint32_t count : {1u, 7u, 16u}) {
            CAPTURE(count);
            CHECK(gpu.nearest(*set, count) == nearest_neighbours(*set, count));
        }
    const std::vector<KnnPoint> three(points.begin(), points.begin() + 3);
    CHECK(gpu.nearest(three, 7) == nearest_neighbours(three, 7));  // fewer points than neighbours
    CHECK(gpu.nearest({}, 5).empty());
    // The graph from the GPU's lists equals the graph from the CPU's, frame after frame.
    KnnGraph on_gpu({.k = 5, .hysteresis = 2}), on_cpu({.k = 5, .hysteresis = 2});
    for (int frame = 0; frame < 3; ++frame) {
        for (KnnPoint& p : points) p.x += float(eighths(random) % 9 - 4) / 8;
        CHECK(on_gpu.update(points, gpu.nearest(points, 7)) == on_cpu.update(points));
    }
    CHECK_THROWS_WITH_AS(gpu.nearest(points, 17), doctest::Contains("1 to 16"), Error);
    std::vector<KnnPoint> bad = three;
    bad[1].y = std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH_AS(gpu.nearest(bad, 2), doctest::Contains("NaN or infinite"), Error);
    CHECK_THROWS_WITH_AS(on_gpu.update(three, {{1}, {0}, {0}}), doctest::Contains("fewer than k + hysteresis"), Error);
}
