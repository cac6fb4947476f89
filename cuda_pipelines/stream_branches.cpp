#include "cuda_pipelines/stream_branches.h"

#include <algorithm>
#include <exception>
#include <map>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/cuda_handle.h"

namespace tvlm {

namespace {

// Side streams a call forks at most: a processor call's windows (tiles and a whole image)
// or a mixed batch's sizes take turns on them. Four branches at once fill the GPU where one
// would not; each stream more costs the call two event calls on the host.
constexpr size_t kSideStreams = 3;

struct Branches {
    CudaEvent fork = make_event();
    std::vector<CudaStream> streams;
    std::vector<CudaEvent> joins;
};

Branches& branches_of_this_thread() {
    int device = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&device));
    thread_local std::map<int, Branches> per_device;
    return per_device[device];
}

}  // namespace

void run_on_branches(size_t count, const std::function<void(size_t, cudaStream_t)>& run, cudaStream_t stream) {
    if (count <= 1) {
        if (count) run(0, stream);
        return;
    }
    Branches& b = branches_of_this_thread();
    const size_t sides = std::min(count - 1, kSideStreams);
    while (b.streams.size() < sides) {
        b.streams.push_back(make_stream());
        b.joins.push_back(make_event());
    }
    TVLM_CUDA_CHECK(cudaEventRecord(b.fork.get(), stream));
    for (size_t s = 0; s < sides; ++s) TVLM_CUDA_CHECK(cudaStreamWaitEvent(b.streams[s].get(), b.fork.get(), 0));
    std::exception_ptr failed;
    for (size_t k = 0; k < count && !failed; ++k) {  // no branch launches after one threw
        try {
            run(k, k == 0 ? stream : b.streams[(k - 1) % sides].get());
        } catch (...) { failed = std::current_exception(); }
    }
    // Joined whatever happened: a capture must get its side streams back before it ends.
    for (size_t s = 0; s < sides; ++s) {
        TVLM_CUDA_CHECK(cudaEventRecord(b.joins[s].get(), b.streams[s].get()));
        TVLM_CUDA_CHECK(cudaStreamWaitEvent(stream, b.joins[s].get(), 0));
    }
    if (failed) std::rethrow_exception(failed);
}

}  // namespace tvlm
