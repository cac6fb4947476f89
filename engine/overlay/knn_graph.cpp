#include "knn_graph.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "error.h"

namespace tvlm {

namespace {

double distance2(const KnnPoint& a, const KnnPoint& b) {
    const double dx = double(a.x) - b.x, dy = double(a.y) - b.y;
    return dx * dx + dy * dy;
}

std::pair<uint64_t, uint64_t> track_pair(uint64_t a, uint64_t b) { return a < b ? std::pair{a, b} : std::pair{b, a}; }

}  // namespace

// Each point's distances to all others once, the `count` nearest kept in a short sorted
// list by insertion (ordered by distance, then index): O(N^2) distances and O(N * count)
// moves at worst, where sorting with the distance recomputed in each comparison cost ten
// times more (0.2 ms for 100 points).
std::vector<std::vector<uint32_t>> nearest_neighbours(std::span<const KnnPoint> points, uint32_t count) {
    const size_t n = points.size();
    const size_t keep = std::min<size_t>(count, n ? n - 1 : 0);
    std::vector<std::vector<uint32_t>> nearest(n);
    std::vector<std::pair<double, uint32_t>> best;
    best.reserve(keep + 1);
    for (uint32_t i = 0; i < n; ++i) {
        best.clear();
        for (uint32_t j = 0; j < n; ++j) {
            if (j == i) continue;
            const double d = distance2(points[i], points[j]);
            if (best.size() == keep && (keep == 0 || d >= best.back().first)) continue;  // ties: the lower index stays
            auto at = best.end();
            while (at != best.begin() && std::prev(at)->first > d) --at;
            best.insert(at, {d, j});
            if (best.size() > keep) best.pop_back();
        }
        nearest[i].reserve(best.size());
        for (const auto& [d, j] : best) nearest[i].push_back(j);
    }
    return nearest;
}

KnnGraph::KnnGraph(KnnOptions options) : options_(options) {
    if (options.k == 0) throw Error("a KNN graph needs k >= 1 neighbours per point");
    if (!(options.max_dy >= 0)) throw Error("a KNN graph's max_dy must be >= 0 (infinity: no cap)");
}

std::vector<KnnEdge> KnnGraph::update(std::span<const KnnPoint> points) {
    check(points);
    return link(points, nearest_neighbours(points, options_.k + options_.hysteresis));
}

std::vector<KnnEdge> KnnGraph::update(std::span<const KnnPoint> points,
                                      const std::vector<std::vector<uint32_t>>& nearest) {
    check(points);
    const size_t want = std::min<size_t>(options_.k + options_.hysteresis, points.empty() ? 0 : points.size() - 1);
    if (nearest.size() != points.size())
        throw Error("KNN: " + std::to_string(nearest.size()) + " neighbour lists for " + std::to_string(points.size()) +
                    " points");
    for (size_t i = 0; i < nearest.size(); ++i) {
        if (nearest[i].size() < want)
            throw Error("KNN: point " + std::to_string(i) + "'s list holds " + std::to_string(nearest[i].size()) +
                        " neighbours, fewer than k + hysteresis = " + std::to_string(want));
        for (uint32_t j : nearest[i])
            if (j >= points.size() || j == i)
                throw Error("KNN: point " + std::to_string(i) + "'s list names point " + std::to_string(j));
    }
    return link(points, nearest);
}

void KnnGraph::check(std::span<const KnnPoint> points) const {
    std::vector<std::pair<uint64_t, size_t>> tracks;
    tracks.reserve(points.size());
    for (size_t i = 0; i < points.size(); ++i) {
        if (!std::isfinite(points[i].x) || !std::isfinite(points[i].y))
            throw Error("KNN point " + std::to_string(i) + " has a NaN or infinite coordinate");
        tracks.push_back({points[i].track, i});
    }
    std::sort(tracks.begin(), tracks.end());
    for (size_t i = 1; i < tracks.size(); ++i)
        if (tracks[i].first == tracks[i - 1].first)
            throw Error("KNN point " + std::to_string(std::max(tracks[i].second, tracks[i - 1].second)) +
                        " repeats track id " + std::to_string(tracks[i].first) + ": track ids are unique within a frame");
}

// Sorted vectors rather than trees: a frame's few hundred to tens of thousands of links are
// collected, sorted and deduplicated once, and the last frame's looked up by binary search.
std::vector<KnnEdge> KnnGraph::link(std::span<const KnnPoint> points, const std::vector<std::vector<uint32_t>>& nearest) {
    const uint32_t k = options_.k, h = options_.hysteresis;
    const auto was_linked = [&](uint32_t a, uint32_t b) {
        return std::binary_search(previous_.begin(), previous_.end(), track_pair(points[a].track, points[b].track));
    };
    // Candidate links: rank < k either way, or rank < k + h either way for last frame's links.
    std::vector<KnnEdge> edges;
    for (uint32_t a = 0; a < nearest.size(); ++a)
        for (uint32_t r = 0; r < std::min<size_t>(nearest[a].size(), k + h); ++r) {
            const uint32_t b = nearest[a][r];
            const bool kept = r < k || was_linked(a, b);
            if (kept && std::abs(double(points[a].y) - points[b].y) <= options_.max_dy)
                edges.push_back({std::min(a, b), std::max(a, b)});
        }
    const auto by_ends = [](const KnnEdge& e, const KnnEdge& f) { return e.a < f.a || (e.a == f.a && e.b < f.b); };
    std::sort(edges.begin(), edges.end(), by_ends);
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    if (options_.max_degree) {
        // Shortest first (ties by the indices), each kept while both ends have room.
        std::vector<KnnEdge> by_length = edges;
        std::stable_sort(by_length.begin(), by_length.end(), [&](const KnnEdge& e, const KnnEdge& f) {
            return distance2(points[e.a], points[e.b]) < distance2(points[f.a], points[f.b]);
        });
        std::vector<uint32_t> degree(points.size(), 0);
        edges.clear();
        for (const KnnEdge& e : by_length)
            if (degree[e.a] < options_.max_degree && degree[e.b] < options_.max_degree) {
                ++degree[e.a];
                ++degree[e.b];
                edges.push_back(e);
            }
        std::sort(edges.begin(), edges.end(), by_ends);
    }
    std::vector<std::pair<uint64_t, uint64_t>> now;
    now.reserve(edges.size());
    for (const KnnEdge& e : edges) now.push_back(track_pair(points[e.a].track, points[e.b].track));
    std::sort(now.begin(), now.end());
    std::vector<std::pair<uint64_t, uint64_t>> changed;
    std::set_symmetric_difference(now.begin(), now.end(), previous_.begin(), previous_.end(), std::back_inserter(changed));
    changes_ = changed.size();
    previous_ = std::move(now);
    return edges;
}

size_t link_points(OverlayScene& scene, std::span<const uint64_t> tracks, KnnGraph& graph, float width,
                   OverlayColor color) {
    if (tracks.size() != scene.points.size())
        throw Error("KNN links need one track id per point: " + std::to_string(tracks.size()) + " ids for " +
                    std::to_string(scene.points.size()) + " points");
    std::vector<KnnPoint> points;
    for (size_t i = 0; i < tracks.size(); ++i) points.push_back({scene.points[i].x, scene.points[i].y, tracks[i]});
    const std::vector<KnnEdge> edges = graph.update(points);
    for (const KnnEdge& e : edges)
        scene.curves.push_back({points[e.a].x, points[e.a].y, points[e.b].x, points[e.b].y, width, color});
    return edges.size();
}

}  // namespace tvlm
