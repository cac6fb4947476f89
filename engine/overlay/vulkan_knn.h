#pragma once
// The KNN graph's nearest neighbours on the GPU (Vulkan compute, shaders/knn_nearest.comp):
// brute force, an invocation per point, tiles of points in shared memory. Its lists feed
// KnnGraph::update(points, nearest) in place of the CPU's.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/host_buffer.h"
#include "engine/overlay/knn_graph.h"

namespace tvlm {

class Context;

class VulkanNearest {
public:
    explicit VulkanNearest(Context& context);

    // Each point's `count` nearest other points (at most the others), nearest first, ties
    // to the lower index, as nearest_neighbours(); squared distances in float. Submits
    // and waits. Throws Error for count outside 1..16 or a NaN or infinite coordinate.
    std::vector<std::vector<uint32_t>> nearest(std::span<const KnnPoint> points, uint32_t count);

private:
    Context& context_;
    HostBuffer points_, nearest_;  // grown as needed
};

}  // namespace tvlm
