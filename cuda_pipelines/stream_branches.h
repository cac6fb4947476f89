#pragma once
// Independent pieces of one call run at once, each on a stream of its own: branch 0 on the
// caller's stream, the others on side streams forked from it (they start after the work
// queued on it before the call) and joined back into it (its later work follows all of
// them). A small grid (a thumbnail beside its tiles, one size of a mixed batch) leaves most
// of a large GPU idle; the other branches fill it. Inside a CUDA graph capture the fork and
// join make parallel branches of the captured graph. Each thread keeps its own side streams
// and events, per device: call it on the device the branches run on.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>

namespace tvlm {

// run(k, stream_k) for k in [0, count). Branches past the side streams kept share them in
// turn (what already runs then fills the GPU). Where a branch throws, no later branch runs,
// the join is queued all the same and the exception rethrown after it (callers check their
// arguments first, so that a refusal launches nothing).
void run_on_branches(size_t count, const std::function<void(size_t, cudaStream_t)>& run, cudaStream_t stream);

}  // namespace tvlm
