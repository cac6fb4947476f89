#include "engine/overlay/knn_graph.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string>

#include "engine/error.h"

namespace tvlm {

namespace {

double distance2(const KnnPoint& a, const KnnPoint& b) {
    const double dx = double(a.x) - b.x, dy = double(a.y) - b.y;
    return dx * dx + dy * dy;
}

std::pair<uint64_t, uint64_t> track_pair(uint64_t a, uint64_t b) { return a < b ? std::pair{a, b} : std::pair{b, a}; }

// (distance, index) lists of the `keep` nearest so far, nearest first.
using Best = std::vector<std::pair<double, uint32_t>>;

// Candidate j at squared distance d into `best`, which keeps the `keep` nearest by
// (distance, index) whatever order the candidates come in.
void consider(Best& best, size_t keep, double d, uint32_t j) {
    const std::pair<double, uint32_t> c{d, j};
    if (best.size() == keep && (keep == 0 || !(c < best.back()))) return;
    auto at = best.end();
    while (at != best.begin() && c < *std::prev(at)) --at;
    best.insert(at, c);
    if (best.size() > keep) best.pop_back();
}

// Every pair's distance once per point, the nearest kept by insertion in a short sorted
// list: O(N^2) distances, the right method for a few hundred points.
void nearest_by_scan(std::span<const KnnPoint> points, size_t keep, std::vector<std::vector<uint32_t>>& nearest) {
    Best best;
    for (uint32_t i = 0; i < points.size(); ++i) {
        best.clear();
        for (uint32_t j = 0; j < points.size(); ++j)
            if (j != i) consider(best, keep, distance2(points[i], points[j]), j);
        for (const auto& [d, j] : best) nearest[i].push_back(j);
    }
}

// A uniform grid of about two points a cell over the points' bounds; each point searches
// rings of cells around its own until the block searched holds every point that could be
// as near as its keep-th (the nearest point outside the block is further than that, strictly,
// so ties at the edge are searched too). Exact, with ties to the lower index, as the scan;
// O(N * cells searched) for points spread over their bounds (thousands of points make the
// O(N^2) scan slow). Returns false, doing nothing, where the bounds are
// not a proper rectangle or a coordinate is not finite.
bool nearest_by_grid(std::span<const KnnPoint> points, size_t keep, std::vector<std::vector<uint32_t>>& nearest) {
    const size_t n = points.size();
    double x0 = points[0].x, y0 = points[0].y, x1 = x0, y1 = y0;
    for (const KnnPoint& p : points) {
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) return false;
        x0 = std::min<double>(x0, p.x), x1 = std::max<double>(x1, p.x);
        y0 = std::min<double>(y0, p.y), y1 = std::max<double>(y1, p.y);
    }
    const double width = x1 - x0, height = y1 - y0;
    if (!(width > 0) || !(height > 0)) return false;  // on a line or one point: the scan
    const double cell = std::sqrt(width * height / (double(n) / 2));
    const auto cells_x = static_cast<int64_t>(std::min(std::floor(width / cell) + 1, double(n)));
    const auto cells_y = static_cast<int64_t>(std::min(std::floor(height / cell) + 1, double(n)));
    const auto cell_of = [&](double v, double origin, int64_t cells) {
        return std::clamp<int64_t>(static_cast<int64_t>(std::floor((v - origin) / cell)), 0, cells - 1);
    };
    // Points by cell (a counting sort).
    std::vector<uint32_t> start(size_t(cells_x * cells_y) + 1, 0), members(n);
    std::vector<int64_t> home(n);
    for (uint32_t i = 0; i < n; ++i) {
        home[i] = cell_of(points[i].y, y0, cells_y) * cells_x + cell_of(points[i].x, x0, cells_x);
        ++start[size_t(home[i]) + 1];
    }
    for (size_t c = 1; c < start.size(); ++c) start[c] += start[c - 1];
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (uint32_t i = 0; i < n; ++i) members[fill[size_t(home[i])]++] = i;
    Best best;
    for (uint32_t i = 0; i < n; ++i) {
        best.clear();
        const KnnPoint& p = points[i];
        const int64_t cx = home[i] % cells_x, cy = home[i] / cells_x;
        const auto search = [&](int64_t x, int64_t y) {
            if (x < 0 || x >= cells_x || y < 0 || y >= cells_y) return;
            const size_t c = size_t(y * cells_x + x);
            for (uint32_t m = start[c]; m < start[c + 1]; ++m)
                if (members[m] != i) consider(best, keep, distance2(p, points[members[m]]), members[m]);
        };
        for (int64_t r = 0;; ++r) {
            // Ring r: the cells r rows or columns away (its top and bottom rows whole).
            for (int64_t x = cx - r; x <= cx + r; ++x) {
                search(x, cy - r);
                if (r > 0) search(x, cy + r);
            }
            for (int64_t y = cy - r + 1; y <= cy + r - 1; ++y) {
                search(cx - r, y);
                search(cx + r, y);
            }
            if (r >= std::max({cx, cy, cells_x - 1 - cx, cells_y - 1 - cy})) break;  // every cell searched
            if (best.size() < keep) continue;
            // The nearest a point outside the searched block can be: its gap to the block's
            // sides (where the block reaches the grid's edge, nothing lies beyond), less a
            // margin for the rounding of cell_of.
            double gap = std::numeric_limits<double>::infinity();
            if (cx - r > 0) gap = std::min(gap, double(p.x) - (x0 + double(cx - r) * cell));
            if (cx + r < cells_x - 1) gap = std::min(gap, x0 + double(cx + r + 1) * cell - double(p.x));
            if (cy - r > 0) gap = std::min(gap, double(p.y) - (y0 + double(cy - r) * cell));
            if (cy + r < cells_y - 1) gap = std::min(gap, y0 + double(cy + r + 1) * cell - double(p.y));
            gap -= 1e-9 * cell;
            if (gap > 0 && best.back().first < gap * gap) break;
        }
        for (const auto& [d, j] : best) nearest[i].push_back(j);
    }
    return true;
}

}  // namespace

// Each point's `count` nearest: by a scan of every pair for up to 256 points, by a grid
// beyond (the same lists).
std::vector<std::vector<uint32_t>> nearest_neighbours(std::span<const KnnPoint> points, uint32_t count) {
    const size_t n = points.size();
    const size_t keep = std::min<size_t>(count, n ? n - 1 : 0);
    std::vector<std::vector<uint32_t>> nearest(n);
    for (auto& list : nearest) list.reserve(keep);
    if (n <= 256 || !nearest_by_grid(points, keep, nearest)) nearest_by_scan(points, keep, nearest);
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
                        " repeats track id " + std::to_string(tracks[i].first) +
                        ": track ids are unique within a frame");
}

// Sorted vectors rather than trees: a frame's few hundred to tens of thousands of links are
// collected, sorted and deduplicated once, and the last frame's looked up by binary search.
std::vector<KnnEdge> KnnGraph::link(std::span<const KnnPoint> points,
                                    const std::vector<std::vector<uint32_t>>& nearest) {
    const uint32_t k = options_.k, h = options_.hysteresis;
    const auto was_linked = [&](uint32_t a, uint32_t b) {
        return std::binary_search(previous_.begin(), previous_.end(), track_pair(points[a].track, points[b].track));
    };
    // Candidate links: rank < k either way, or rank < k + h either way for last frame's links.
    std::vector<KnnEdge> candidates;
    for (uint32_t a = 0; a < nearest.size(); ++a)
        for (uint32_t r = 0; r < std::min<size_t>(nearest[a].size(), k + h); ++r) {
            const uint32_t b = nearest[a][r];
            const bool kept = r < k || was_linked(a, b);
            if (kept && std::abs(double(points[a].y) - points[b].y) <= options_.max_dy)
                candidates.push_back({std::min(a, b), std::max(a, b)});
        }
    // In (a, b) order, each once: grouped by lower end (a counting sort), then each group's
    // handful by higher end (a sort of all of them was much slower).
    std::vector<uint32_t> group(points.size() + 1, 0);
    for (const KnnEdge& e : candidates) ++group[e.a + 1];
    for (size_t a = 1; a < group.size(); ++a) group[a] += group[a - 1];
    std::vector<KnnEdge> edges(candidates.size());
    std::vector<uint32_t> next(group.begin(), group.end() - 1);
    for (const KnnEdge& e : candidates) edges[next[e.a]++] = e;
    size_t kept = 0;
    for (size_t a = 0; a + 1 < group.size(); ++a) {
        const auto first = edges.begin() + group[a], end = edges.begin() + group[a + 1];
        std::sort(first, end, [](const KnnEdge& e, const KnnEdge& f) { return e.b < f.b; });
        for (auto e = first; e != end; ++e)
            if (e == first || e->b != std::prev(e)->b) edges[kept++] = *e;
    }
    edges.resize(kept);
    const auto by_ends = [](const KnnEdge& e, const KnnEdge& f) { return e.a < f.a || (e.a == f.a && e.b < f.b); };
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
    std::set_symmetric_difference(now.begin(), now.end(), previous_.begin(), previous_.end(),
                                  std::back_inserter(changed));
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
