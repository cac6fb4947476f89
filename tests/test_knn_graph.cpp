// The KNN graph over tracked points: each point's k nearest against a sort of all its
// distances (ties by index, on a grid where they abound), symmetric links listed once,
// the caps, hysteresis counted on jittering points, and refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "engine/error.h"
#include "engine/overlay/knn_graph.h"

namespace tvlm {
namespace {

std::vector<KnnPoint> random_points(size_t n, std::mt19937& random) {
    std::uniform_real_distribution<float> at(0.0f, 100.0f);
    std::vector<KnnPoint> points;
    for (size_t i = 0; i < n; ++i) points.push_back({at(random), at(random), 1000 + i});
    return points;
}

// Independent of nearest_neighbours(): every other point sorted by (distance, index).
std::vector<uint32_t> sorted_others(const std::vector<KnnPoint>& points, uint32_t i) {
    std::vector<std::pair<double, uint32_t>> all;
    for (uint32_t j = 0; j < points.size(); ++j)
        if (j != i)
            all.push_back({std::hypot(double(points[i].x) - points[j].x, double(points[i].y) - points[j].y), j});
    std::sort(all.begin(), all.end());
    std::vector<uint32_t> order;
    for (const auto& [d, j] : all) order.push_back(j);
    return order;
}

TEST_CASE("a KNN graph links each point to its k nearest, ties by index, symmetric and once") {
    std::mt19937 random(4);
    std::vector<KnnPoint> grid;  // equal distances everywhere: ties decide
    for (uint32_t y = 0; y < 6; ++y)
        for (uint32_t x = 0; x < 7; ++x) grid.push_back({float(x) * 10, float(y) * 10, y * 7 + x});
    for (const std::vector<KnnPoint>& points : {random_points(60, random), grid}) {
        for (uint32_t k : {1u, 3u, 5u}) {
            CAPTURE(k);
            const auto nearest = nearest_neighbours(points, k);
            std::set<std::pair<uint32_t, uint32_t>> expected;
            for (uint32_t i = 0; i < points.size(); ++i) {
                const std::vector<uint32_t> order = sorted_others(points, i);
                CHECK(nearest[i] == std::vector<uint32_t>(order.begin(), order.begin() + k));
                for (uint32_t r = 0; r < k; ++r) expected.insert({std::min(i, order[r]), std::max(i, order[r])});
            }
            KnnGraph graph({.k = k, .hysteresis = 0});
            const std::vector<KnnEdge> edges = graph.update(points);
            std::set<std::pair<uint32_t, uint32_t>> got;
            for (const KnnEdge& e : edges) {
                CHECK(e.a < e.b);
                CHECK(got.insert({e.a, e.b}).second);  // listed once
            }
            CHECK(got == expected);
        }
    }
}

// Above 256 points the nearest come from a grid of cells instead of a scan of every pair:
// the same lists, ties by index, for spread, tied, clustered, duplicated and collinear
// points (the last taking the scan).
TEST_CASE("the nearest of many points, by the grid: each list equals a sort of all distances") {
    std::mt19937 random(12);
    std::vector<std::vector<KnnPoint>> sets;
    sets.push_back(random_points(1500, random));
    std::vector<KnnPoint> lattice;  // spacing 1: four equal nearest everywhere
    for (uint32_t y = 0; y < 30; ++y)
        for (uint32_t x = 0; x < 40; ++x) lattice.push_back({float(x), float(y), y * 40 + x});
    sets.push_back(lattice);
    std::vector<KnnPoint> clusters;  // dense clumps far apart, most cells empty
    std::normal_distribution<float> spread(0.0f, 0.5f);
    for (uint32_t i = 0; i < 900; ++i)
        clusters.push_back({float(i % 3) * 500 + spread(random), float(i % 5) * 300 + spread(random), i});
    sets.push_back(clusters);
    std::vector<KnnPoint> repeated;  // 300 places, each point given three times
    for (uint32_t i = 0; i < 900; ++i) repeated.push_back({float((i % 300) * 7 % 97), float((i % 300) * 13 % 89), i});
    sets.push_back(repeated);
    std::vector<KnnPoint> line;  // no area: the scan
    for (uint32_t i = 0; i < 400; ++i) line.push_back({float(i % 37), 5.0f, i});
    sets.push_back(line);
    for (size_t s = 0; s < sets.size(); ++s) {
        CAPTURE(s);
        const std::vector<KnnPoint>& points = sets[s];
        const uint32_t k = 7;
        const auto nearest = nearest_neighbours(points, k);
        size_t wrong = 0;
        for (uint32_t i = 0; i < points.size(); ++i) {
            const std::vector<uint32_t> order = sorted_others(points, i);
            wrong += nearest[i] != std::vector<uint32_t>(order.begin(), order.begin() + k);
        }
        CHECK(wrong == 0);
    }
}

TEST_CASE("KNN caps drop steep links and keep the shortest within a degree") {
    std::mt19937 random(8);
    const std::vector<KnnPoint> points = random_points(80, random);
    KnnGraph steep({.k = 5, .hysteresis = 0, .max_dy = 10});
    for (const KnnEdge& e : steep.update(points)) CHECK(std::abs(points[e.a].y - points[e.b].y) <= 10);
    KnnGraph capped({.k = 6, .hysteresis = 0, .max_degree = 3});
    std::vector<uint32_t> degree(points.size(), 0);
    const std::vector<KnnEdge> edges = capped.update(points);
    for (const KnnEdge& e : edges) ++degree[e.a], ++degree[e.b];
    CHECK(*std::max_element(degree.begin(), degree.end()) <= 3);
    CHECK(edges.size() >= points.size());  // the cap trims, it does not empty
    // Fewer points than k: every pair, once.
    KnnGraph all({.k = 10});
    const std::vector<KnnPoint> four(points.begin(), points.begin() + 4);
    CHECK(all.update(four).size() == 6);
    CHECK(all.update({}).empty());
}

TEST_CASE("hysteresis keeps links of jittering points from flickering") {
    // Points on a jittered grid that move a little every frame: without hysteresis, near
    // ties swap neighbours from frame to frame; with h = 2, links hold.
    auto frames_of = [](uint32_t h) {
        std::mt19937 random(12);
        std::normal_distribution<float> jitter(0.0f, 0.8f);
        std::vector<KnnPoint> base;
        for (uint32_t i = 0; i < 100; ++i) base.push_back({float(i % 10) * 10, float(i / 10) * 10, 7 * i + 1});
        KnnGraph graph({.k = 4, .hysteresis = h});
        size_t changes = 0;
        for (int f = 0; f < 40; ++f) {
            std::vector<KnnPoint> now = base;
            for (KnnPoint& p : now) p.x += jitter(random), p.y += jitter(random);
            std::shuffle(now.begin(), now.end(), random);  // indices change, tracks do not
            graph.update(now);
            if (f > 0) changes += graph.changes();
        }
        return changes;
    };
    const size_t flicker = frames_of(0), held = frames_of(2);
    MESSAGE("link changes over 39 frames of 100 jittering points: " << flicker << " without hysteresis, " << held
                                                                    << " with h = 2");
    CHECK(flicker > 100);
    CHECK(held * 4 < flicker);
}

TEST_CASE("KNN graphs refuse NaN points, repeated tracks and k = 0, changing nothing") {
    CHECK_THROWS_WITH_AS(KnnGraph({.k = 0}), doctest::Contains("k >= 1"), Error);
    KnnGraph graph({.k = 2, .hysteresis = 1});
    const std::vector<KnnPoint> good{{0, 0, 1}, {1, 0, 2}, {5, 0, 3}};
    CHECK(graph.update(good).size() == 3);  // k = 2 of 3 points: every pair
    const std::vector<KnnPoint> nan{{0, 0, 1}, {std::numeric_limits<float>::quiet_NaN(), 0, 2}};
    CHECK_THROWS_WITH_AS(graph.update(nan), doctest::Contains("NaN"), Error);
    const std::vector<KnnPoint> twice{{0, 0, 1}, {1, 0, 1}};
    CHECK_THROWS_WITH_AS(graph.update(twice), doctest::Contains("repeats track id 1"), Error);
    CHECK(graph.update(good).size() == 3);  // k = 2 of 3 points: every pair
    CHECK(graph.changes() == 0);            // the refused frames left the previous links
}

TEST_CASE("given neighbour lists need min(k + hysteresis, points - 1) entries: that many pass, one fewer fails") {
    const std::vector<KnnPoint> three{{0, 0, 1}, {1, 0, 2}, {5, 0, 3}};
    // k + hysteresis = 6 of 3 points: a point has 2 others, and 2 is enough.
    KnnGraph many({.k = 5, .hysteresis = 1});
    CHECK(many.update(three, {{1, 2}, {0, 2}, {1, 0}}).size() == 3);
    CHECK_THROWS_WITH_AS(many.update(three, {{1, 2}, {0}, {1, 0}}),
                         doctest::Contains("point 1's list holds 1 neighbours, fewer than k + hysteresis = 2"), Error);
    // k + hysteresis = 1 of 3 points: one each.
    KnnGraph one({.k = 1, .hysteresis = 0});
    CHECK(one.update(three, {{1}, {0}, {1}}).size() == 2);
    CHECK_THROWS_WITH_AS(one.update(three, {{1}, {}, {1}}), doctest::Contains("fewer than k + hysteresis = 1"), Error);
}

}  // namespace
}  // namespace tvlm
