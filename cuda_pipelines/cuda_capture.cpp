#include "cuda_pipelines/cuda_capture.h"

#include "cuda/cuda_check.h"

namespace tvlm {

CudaGraphExec capture_graph(const std::function<void(cudaStream_t)>& record) {
    const CudaStream stream = make_stream();
    TVLM_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
        record(stream.get());
    } catch (...) {
        cudaStreamEndCapture(stream.get(), &graph);  // ends the capture; what it made is dropped
        if (graph) cudaGraphDestroy(graph);
        throw;
    }
    TVLM_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
    const CudaGraph owned(graph);
    cudaGraphExec_t exec = nullptr;
    TVLM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    return CudaGraphExec(exec);
}

}  // namespace tvlm
