#pragma once
// The KNN graph over tracked points (engine/overlay/knn_graph.h's rules) with every step on
// the GPU: each point's k + h nearest by brute force (a warp per point voting on 32
// candidates at a time; in the one-block path of small frames, slices of the candidates
// whose lists are merged), the links chosen with hysteresis against
// the last frame's (a hash set of track-id pairs), each listed once in (a, b) order, the
// optional degree cap (shortest first: a stable radix sort, then one thread's greedy pass),
// and the count of links that changed. Squared distances are float without fused
// multiply-adds, as shaders/knn_nearest.comp computes them.
// Stream-ordered, no host sync; cuda_pipelines/cuda_knn_graph.h owns the buffers.
#include <cuda_runtime_api.h>
#include <vector_types.h>

#include <cstddef>
#include <cstdint>

namespace tvlm {

// What one frame reports, zeroed by the launch (host-readable after a copy).
struct KnnFrameStats {
    uint32_t edges = 0;           // the frame's links (0 where it was refused)
    uint32_t changes = 0;         // links that appeared or disappeared, by track ids
    uint32_t bad_point = 0;       // ~i of the lowest point i with a NaN or infinite coordinate, or 0
    uint32_t repeated_track = 0;  // ~i of the lowest point i that repeats an earlier point's track id, or 0
    uint32_t kept_both = 0;       // links of this frame that the last frame had too
    uint32_t blocks_done = 0;     // commit_kernel's blocks that finished (the last finishes the frame)
    uint32_t pad[2] = {};
};

// What the graph keeps on the device between frames: two tables of links by track ids, the
// last frame's in `current` (a refused frame leaves it there).
struct KnnDeviceState {
    uint32_t current = 0;
    uint32_t capacity[2] = {1, 1};  // slots of each hash table (a power of two)
    uint32_t count[2] = {0, 0};     // links in each
    uint32_t pad[3] = {};
};

struct KnnLaunch {
    uint32_t count = 0;                // points
    uint32_t keep = 0;                 // neighbours per point: min(k + hysteresis, count - 1)
    const float* xy = nullptr;         // device: x, y per point
    const uint64_t* tracks = nullptr;  // device: a track id per point
    uint32_t k = 0, hysteresis = 0;
    float max_dy = 0;
    uint32_t max_degree = 0;  // 0: no cap
    // Zeroed by the grid path's launch, one range: the stats, then the tables below up to
    // `flags` (the one-block path clears the stats itself and keeps the rest in shared memory).
    uint32_t* zeroed = nullptr;
    size_t zeroed_words = 0;
    KnnFrameStats* stats = nullptr;
    uint32_t* track_table = nullptr;  // track_capacity slots: point + 1 by its track id (repeats found here)
    uint32_t track_capacity = 0;      // a power of two >= 2 * count
    uint32_t* owned = nullptr;        // count + 1: links by their lower end
    uint32_t* cursor = nullptr;       // count
    uint32_t* degree = nullptr;       // count (capped)
    uint32_t* flags = nullptr;        // count * keep (capped): the link survives the cap
    // Not zeroed.
    uint32_t* nearest = nullptr;  // count * keep
    uint32_t* offsets = nullptr;  // count + 1
    // count * keep each. frame_links: first each (point, rank)'s link (lower end first) or
    // ~0u, then the frame's links in (a, b) order (uncapped: the result). unsorted_links: the
    // links grouped by lower end, in the order the atomics gave.
    uint2* frame_links = nullptr;
    uint2* unsorted_links = nullptr;
    uint2* capped = nullptr;   // count * keep (capped): the links that survive the cap
    uint32_t* keys = nullptr;  // count * keep each (capped): lengths and link indices, before and after sorting
    uint32_t* keys_sorted = nullptr;
    uint32_t* order = nullptr;
    uint32_t* order_sorted = nullptr;
    ulonglong2* pairs[2] = {};    // count * keep each: table t's links as (lower, higher) track ids
    uint32_t* tables[2] = {};     // table_capacity slots each: link + 1 by its track pair
    uint32_t table_capacity = 0;  // a power of two >= 2 * count * keep
    KnnDeviceState* state = nullptr;
    void* scratch = nullptr;  // knn_scratch_bytes(count, keep)
    size_t scratch_bytes = 0;
};

// The scratch CUB's scan, sort and selection need for `count` points of `keep` neighbours.
size_t knn_scratch_bytes(uint32_t count, uint32_t keep);

void launch_knn_graph(const KnnLaunch& launch, cudaStream_t stream);

}  // namespace tvlm
