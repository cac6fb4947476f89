#include "cuda_pipelines/cuda_frame_graph.h"

#include <algorithm>

#include "cuda_pipelines/cuda_capture.h"
#include "cuda/cuda_check.h"
#include "engine/error.h"

namespace tvlm {

CudaFrameGraph::CudaFrameGraph(const FrameGraphDesc& desc) : desc_(desc) {
    if (!desc.mips || !desc.sampler)
        throw Error("a frame graph needs the texture's CudaBoxMips and a CudaPatchSampler");
    desc.sampler->check(desc.texture.desc, desc.output_bytes);
    if (!desc.output) throw Error("a frame graph needs an output buffer");
    kept_.push_back({desc.frame, capture(desc.frame)});
}

CudaGraphExec CudaFrameGraph::capture(const void* frame) const {
    // Where the patches read no level of the chain's tail, the tail runs beside them
    // (CudaBoxMips::generate_from's defer_tail) instead of before them.
    const bool defer_tail = desc_.tail_beside_patches &&
                            desc_.sampler->layout().levels_needed <= desc_.mips->deferred_tail_level();
    return capture_graph([&](cudaStream_t stream) {
        desc_.mips->generate_from(frame, desc_.row_bytes, stream, defer_tail);
        desc_.sampler->sample(desc_.texture, desc_.object, desc_.output, desc_.output_bytes, stream);
        if (defer_tail) desc_.mips->finish_deferred_tail(stream);
    });
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
    TVLM_CUDA_CHECK(cudaGraphLaunch(it->exec.get(), stream));
}

}  // namespace tvlm
