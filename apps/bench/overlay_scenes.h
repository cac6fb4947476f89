#pragma once
// The scenes tvlm bench draws with the overlay renderer: random boxes (with labels) and
// points on a 3840x2160 frame, and their KNN links, for the CUDA and the CUDA-free suites.
#include <cstdint>
#include <random>
#include <vector>

#include "engine/overlay/knn_graph.h"
#include "engine/overlay/overlay_scene.h"

namespace tvlm {

inline constexpr uint32_t kWidth = 3840, kHeight = 2160;

// Boxes of 40-300 pixels a side, a third of them filled; `labels`: each with a class name
// and score over its top edge (20-pixel text on a background, as detectors' overlays have).
void add_boxes(OverlayScene& scene, size_t count, bool labels, std::mt19937& random);
// `count` points (radius 5), returned with their track ids for the KNN graph.
std::vector<KnnPoint> add_points(OverlayScene& scene, size_t count, std::mt19937& random);
// The KNN links as curves (link_points, as tvlm overlay draws them); returns the host time
// of the graph (median of 15), its minimum in `min_us`.
double add_links(OverlayScene& scene, const std::vector<KnnPoint>& points, uint32_t k, double* min_us);

}  // namespace tvlm
