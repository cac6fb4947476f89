#include "cuda_frame_graph.h"

#include <algorithm>

#include "cuda_check.h"
#include "error.h"

namespace tvlm {

CudaFrameGraph::CudaFrameGraph(const FrameGraphDesc& desc) : desc_(desc) {
    if (!desc.mips || !desc.sampler) throw Error("a frame graph needs the texture's CudaBoxMips and a CudaPatchSampler");
    desc.sampler->check(desc.texture.desc, desc.output_bytes);
    if (!desc.output) throw Error("a frame graph needs an output buffer");
    kept_.push_back({desc.frame, capture(desc.frame)});
}

CudaGraphExec CudaFrameGraph::capture(const void* frame) const {
    // Captured on a stream of its own, in thread-local mode: other threads' CUDA calls go on.
    cudaStream_t raw = nullptr;
    TVLM_CUDA_CHECK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
    const CudaStream stream(raw);
    TVLM_CUDA_CHECK(cudaStreamBeginCapture(stream.handle(), cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
        desc_.mips->generate_from(frame, desc_.row_bytes, stream.handle());
        desc_.sampler->sample(desc_.texture, desc_.object, desc_.output, desc_.output_bytes, stream.handle());
    } catch (...) {
        cudaStreamEndCapture(stream.handle(), &graph);  // ends the capture; what it made is dropped
        if (graph) cudaGraphDestroy(graph);
        throw;
    }
    TVLM_CUDA_CHECK(cudaStreamEndCapture(stream.handle(), &graph));
    const CudaGraph owned(graph);
    cudaGraphExec_t exec = nullptr;
    TVLM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    return CudaGraphExec(exec);
}

void CudaFrameGraph::launch(cudaStream_t stream, const void* frame) {
    if (!frame) frame = desc_.frame;
    auto it = std::find_if(kept_.begin(), kept_.end(), [&](const Kept& k) { return k.frame == frame; });
    if (it == kept_.end()) {
        if (kept_.size() == kKeptGraphs) kept_.erase(kept_.begin());
        kept_.push_back({frame, capture(frame)});
        it = kept_.end() - 1;
    } else if (it != kept_.end() - 1) {
        std::rotate(it, it + 1, kept_.end());  // most recently launched last
        it = kept_.end() - 1;
    }
    TVLM_CUDA_CHECK(cudaGraphLaunch(it->exec.handle(), stream));
}

}  // namespace tvlm
