#include "cuda_pipelines/replayed_launches.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cuda/cuda_check.h"
#include "cuda/stream_capture.h"
#include "cuda_pipelines/cuda_capture.h"
#include "engine/error.h"

namespace tvlm {

size_t ReplayedLaunches::graphs() const {
    const std::lock_guard lock(mutex_);
    return graphs_.size();
}

bool ReplayedLaunches::replay(const Key& key, cudaStream_t stream) {
    for (Graph& g : graphs_)
        if (g.key == key) {
            g.last_use = ++clock_;
            g.replayed = true;
            TVLM_CUDA_CHECK(cudaGraphLaunch(g.exec.get(), stream));
            return true;
        }
    return false;
}

namespace {

// TVLM_REPLAY=0 launches every call directly (to compare, or to rule the replay out).
bool replay_enabled() {
    static const bool enabled = [] {
        const char* v = std::getenv("TVLM_REPLAY");
        return !(v && std::strcmp(v, "0") == 0);
    }();
    return enabled;
}

}  // namespace

void ReplayedLaunches::run(const Key& key, cudaStream_t stream, const std::function<void(cudaStream_t)>& launches) {
    if (!replay_enabled() || stream_capturing(stream)) {  // the caller's capture records the launches themselves
        launches(stream);
        return;
    }
    {
        const std::lock_guard lock(mutex_);
        if (!direct_only_ && (replay(key, stream) || captured(key, stream, launches))) return;
    }
    launches(stream);
}

bool ReplayedLaunches::captured(const Key& key, cudaStream_t stream,
                                const std::function<void(cudaStream_t)>& launches) {
    if (paused_) {  // captures have not paid lately (the header says why)
        if (--paused_ == 0) wasted_ = 0;
        return false;
    }
    const auto seen = std::find(seen_.begin(), seen_.end(), key);
    if (seen == seen_.end()) {  // the first call: launched directly, remembered
        seen_.push_back(key);
        if (seen_.size() > kSeen) seen_.pop_front();
        return false;
    }
    // The second: captured (nothing runs), kept, replayed.
    seen_.erase(seen);
    CudaGraphExec exec;
    try {
        exec = capture_graph(launches);
    } catch (const Error&) {
        // A sequence that cannot be captured (or a launch refused while capturing): this
        // object launches directly from now on, and the caller's direct call raises the
        // refusal if there is one.
        (void)cudaGetLastError();
        direct_only_ = true;
        return false;
    }
    if (graphs_.size() == kGraphs) {  // the least recently replayed makes room
        const auto evicted = std::min_element(graphs_.begin(), graphs_.end(),
                                              [](const Graph& a, const Graph& b) { return a.last_use < b.last_use; });
        wasted_ = evicted->replayed ? 0 : wasted_ + 1;
        if (wasted_ >= kWastedLimit) {
            paused_ = kPause;
            seen_.clear();
        }
        graphs_.erase(evicted);
    }
    graphs_.push_back({key, std::move(exec), ++clock_});
    TVLM_CUDA_CHECK(cudaGraphLaunch(graphs_.back().exec.get(), stream));
    return true;
}

}  // namespace tvlm
