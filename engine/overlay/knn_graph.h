#pragma once
// A k-nearest-neighbour graph over tracked points that does not flicker from frame to
// frame (issue 19): each point links to its k nearest (distance, ties broken by the lower
// index), links are symmetric and listed once, optional caps drop links that are too
// steep or exceed a node's degree, and hysteresis keeps a link of the previous frame (found
// by the points' track ids) while its ends stay within rank k + h of each other, where a
// new link needs rank k. Exact: each point's nearest by a scan of every pair up to 256
// points, by a uniform grid beyond (the same lists, ties by index).
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "engine/overlay/overlay_scene.h"

namespace tvlm {

struct KnnPoint {
    float x = 0, y = 0;
    uint64_t track = 0;  // the point's identity across frames (unique within a frame)
};

struct KnnOptions {
    uint32_t k = 5;                                         // neighbours per point; k >= N links every pair
    uint32_t hysteresis = 2;                                // h: an existing link survives within rank k + h
    float max_dy = std::numeric_limits<float>::infinity();  // longest vertical extent of a link
    uint32_t max_degree = 0;                                // 0: no cap; else the shortest links are kept first
};

struct KnnEdge {
    uint32_t a = 0, b = 0;  // indices into this frame's points, a < b
    bool operator==(const KnnEdge&) const = default;
};

class KnnGraph {
public:
    // Throws Error for k = 0.
    explicit KnnGraph(KnnOptions options = {});

    // This frame's links, sorted by (a, b). Throws Error, changing nothing, for NaN or
    // infinite coordinates or a track id given twice.
    std::vector<KnnEdge> update(std::span<const KnnPoint> points);
    // The same from each point's k + hysteresis nearest computed elsewhere (VulkanNearest);
    // Error where a list is shorter than that (and than the other points) or names a
    // point that does not exist.
    std::vector<KnnEdge> update(std::span<const KnnPoint> points, const std::vector<std::vector<uint32_t>>& nearest);
    // Links that appeared or disappeared at the last update (by track ids).
    size_t changes() const { return changes_; }

private:
    void check(std::span<const KnnPoint> points) const;
    std::vector<KnnEdge> link(std::span<const KnnPoint> points, const std::vector<std::vector<uint32_t>>& nearest);
    KnnOptions options_;
    std::vector<std::pair<uint64_t, uint64_t>>
        previous_;  // the last frame's links by track ids, lower id first, sorted
    size_t changes_ = 0;
};

// Links the scene's points (their track ids in `tracks`, one each) with `graph`'s next
// frame, drawn as curves of `width` and `color` after the scene's own; returns the links.
// Throws Error where tracks and points differ in number, or as update() does.
inline constexpr OverlayColor kKnnLinkColor{255, 214, 90, 220};
size_t link_points(OverlayScene& scene, std::span<const uint64_t> tracks, KnnGraph& graph, float width = 2,
                   OverlayColor color = kKnnLinkColor);

// Each point's `count` nearest other points, nearest first, ties broken by the lower index.
std::vector<std::vector<uint32_t>> nearest_neighbours(std::span<const KnnPoint> points, uint32_t count);

}  // namespace tvlm
