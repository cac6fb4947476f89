#pragma once
// The KNN graph over tracked points on CUDA (cuda/overlay/knn_graph_kernels.h), owning its
// buffers and the last frame's links between frames: the GPU twin of KnnGraph, with the
// same rules and options. Its links go straight to CudaOverlay::draw (links()) with no host
// round trip, so a frame's graph and drawing are all stream-ordered GPU work.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "cuda/cuda_handle.h"
#include "cuda_pipelines/cuda_overlay.h"
#include "cuda/device_buffer.h"
#include "engine/overlay/knn_graph.h"
#include "cuda/overlay/knn_graph_kernels.h"

namespace tvlm {

class CudaKnnGraph {
public:
    // Throws Error for k = 0, k + hysteresis above 16 (the neighbours each point keeps in
    // registers), or a negative or NaN max_dy.
    explicit CudaKnnGraph(KnnOptions options = {});

    // This frame's links on `stream`; no host sync. The points go through this object's two
    // pinned buffers in turn: the host waits only for the copy of the update before the
    // previous one. Throws Error, launching nothing, for a NaN or infinite
    // coordinate or more than 2^24 points. A track id given twice is found on the device:
    // that frame has no links and leaves the graph as it was, and the next edges() or
    // changes() throws Error naming the point.
    void update(std::span<const KnnPoint> points, cudaStream_t stream);

    // The last update's links sorted by (a, b), as KnnGraph::update returns them, how many
    // links appeared or disappeared at it (by track ids), and how many it has (edges().size()
    // without copying them). All wait for the update.
    std::vector<KnnEdge> edges();
    size_t changes();
    size_t edge_count();

    // The last update's links for CudaOverlay::draw, at index `at` of its shapes (valid
    // until the next update, stream-ordered after it).
    OverlayDeviceLinks links(size_t at, float width = 2, OverlayColor color = kKnnLinkColor) const;

private:
    void grow(uint32_t count, uint32_t keep, cudaStream_t stream);
    const KnnFrameStats& finished();  // waits for the last update; throws for a refused frame

    KnnOptions options_;
    uint32_t count_ = 0, keep_ = 0;  // the last update's
    cudaStream_t stream_ = nullptr;  // the last update's
    // The points (x, y of each, then the track ids) through two pinned buffers in turn: an
    // update waits only for the copy of the update before the previous one.
    PinnedMemory staging_[2];
    size_t staging_bytes_[2] = {};
    CudaEvent copied_[2] = {make_event(), make_event()};
    int slot_ = 0;
    PinnedMemory stats_;             // the last update's KnnFrameStats, copied back
    CudaEvent done_ = make_event();  // the last update's stats copied back
    DeviceBuffer<uint8_t> points_, scratch_;
    DeviceBuffer<uint32_t> zeroed_, nearest_, offsets_, keys_, keys_sorted_, order_, order_sorted_;
    DeviceBuffer<uint2> unsorted_links_, frame_links_, capped_;
    DeviceBuffer<ulonglong2> pairs_[2];
    DeviceBuffer<uint32_t> tables_[2];
    DeviceBuffer<KnnDeviceState> state_;
    uint32_t track_capacity_ = 0;
    size_t zeroed_words_ = 0;
    std::pair<uint32_t, uint32_t> scratch_for_{~0u, ~0u};  // the (count, keep) scratch_ was sized for
};

}  // namespace tvlm
