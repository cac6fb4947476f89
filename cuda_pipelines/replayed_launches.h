#pragma once
// An entry point's launches replayed as one CUDA graph once a call repeats. A call with the
// same arguments (every pointer and size its launches read) makes the same launches, and
// torch's caching allocator hands a training or serving loop the same blocks call after call,
// so from the second such call one graph launch replaces the call's several kernel launches
// and memsets: an eager call's host time is mostly launches when its kernels take
// microseconds.
//
// A call into a stream being captured launches directly (the capture records it). A capture
// that fails (a launch sequence that cannot be captured) turns the replay off for this
// object. Replays of one graph are ordered behind each other, on whatever streams.
//
// A capture pays only where its key comes back: an object whose keys return once by chance
// (a call reading a new allocation each time, whose blocks the allocator sometimes hands
// out again) would capture, instantiate and evict a graph per such call, each costing more
// host time than the launches it stands for. So once kWastedLimit graphs in a row leave
// the kept set never replayed, the object launches its new keys directly for its next
// kPause calls (keeping and replaying the graphs it has), then captures again.
// Thread-safe: a lock guards the graphs; direct launches run outside it.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "cuda/cuda_handle.h"

namespace tvlm {

class ReplayedLaunches {
public:
    // What identifies a call: an entry point's tag and every value its launches read (pointers,
    // sizes, the bytes of a parameter struct): equal keys make equal launches.
    using Key = std::vector<uint64_t>;

    // launches(stream) on `stream`: directly the first time `key` is seen, from its second
    // call as a replay of the graph they were captured into. Must be called on the device
    // the launches run on.
    void run(const Key& key, cudaStream_t stream, const std::function<void(cudaStream_t)>& launches);

    // Graphs kept (for tests: a repeated call replays).
    size_t graphs() const;

    static constexpr size_t kGraphs = 16;  // a step's calls times the blocks the allocator rotates
    static constexpr size_t kSeen = 32;
    static constexpr size_t kWastedLimit = 4;
    static constexpr size_t kPause = 256;

private:
    struct Graph {
        Key key;
        CudaGraphExec exec;
        uint64_t last_use;
        bool replayed = false;  // launched again after the call that captured it
    };

    // Replays `key`'s graph if kept (under the lock); false if not.
    bool replay(const Key& key, cudaStream_t stream);
    // A key not kept (under the lock): captured into a graph and launched on its second
    // sight; false where the caller launches directly (its first sight, a pause, a failed capture).
    bool captured(const Key& key, cudaStream_t stream, const std::function<void(cudaStream_t)>& launches);

    mutable std::mutex mutex_;
    std::vector<Graph> graphs_;
    std::deque<Key> seen_;  // keys called once, not yet captured
    uint64_t clock_ = 0;
    bool direct_only_ = false;
    size_t wasted_ = 0;  // graphs evicted in a row without a replay
    size_t paused_ = 0;  // calls left that launch new keys directly
};

}  // namespace tvlm
