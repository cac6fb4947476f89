#include "cuda_pipelines/cuda_capture.h"

#include <map>

#include "cuda/cuda_check.h"

namespace tvlm {

namespace {

// This thread's capture stream on the current device: a capture leaves it idle (nothing
// runs while capturing), so the next capture takes it again rather than creating and
// destroying a stream, which costs about as much host time as instantiating a small graph.
// A capture begun while this thread's capture records (nested) gets a stream of its own.
struct CaptureStream {
    CudaStream stream = make_stream();
    bool in_use = false;
};

CaptureStream& capture_stream_of_this_thread() {
    int device = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&device));
    thread_local std::map<int, CaptureStream> per_device;
    return per_device[device];
}

}  // namespace

CudaGraphExec capture_graph(const std::function<void(cudaStream_t)>& record) {
    CaptureStream& kept = capture_stream_of_this_thread();
    const bool nested = kept.in_use;
    const CudaStream own = nested ? make_stream() : CudaStream{};
    const cudaStream_t stream = nested ? own.get() : kept.stream.get();
    kept.in_use = true;
    struct Release {
        CaptureStream& kept;
        bool nested;
        ~Release() {
            if (!nested) kept.in_use = false;
        }
    } release{kept, nested};
    TVLM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
        record(stream);
    } catch (...) {
        cudaStreamEndCapture(stream, &graph);  // ends the capture; what it made is dropped
        if (graph) cudaGraphDestroy(graph);
        throw;
    }
    TVLM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    const CudaGraph owned(graph);
    cudaGraphExec_t exec = nullptr;
    TVLM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    return CudaGraphExec(exec);
}

}  // namespace tvlm
