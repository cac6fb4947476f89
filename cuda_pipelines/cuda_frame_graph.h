#pragma once
// A frame's whole CUDA pipeline, frame in CUDA memory -> level 0 of a texture -> box mips
// -> patches (CudaBoxMips::generate_from, CudaPatchSampler::sample), captured as a CUDA
// graph and relaunched per frame: one launch instead of one per step, the kernels back to
// back. This saves little at 1024^2: the steps' own GPU time, not
// their launches, is most of a small frame's time (docs/benchmarks.md, "Frames in CUDA
// memory").
//
// The graph keeps what it was made with: the texture, the sampler's layout, the texture
// object and the output. Each launch may read its frame from another address, with rows
// and layers as at capture: a graph is captured for each address and the last
// kKeptGraphs are kept (a decoder cycles through a few output buffers), so a new address
// costs one capture, and a known one nothing.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/cuda_handle.h"
#include "cuda_pipelines/cuda_mipmaps.h"
#include "cuda_pipelines/cuda_patch_sampler.h"

namespace tvlm {

struct FrameGraphDesc {
    CudaMipmaps texture;                // level 0 of every layer is written, then its chain (not r32f)
    const CudaBoxMips* mips = nullptr;  // made on `texture`
    const CudaPatchSampler* sampler = nullptr;
    cudaTextureObject_t object = 0;  // on `texture`, with sampler->sampler_desc()
    const void* frame = nullptr;     // the first frame: every layer, `row_bytes` apart
    size_t row_bytes = 0;
    void* output = nullptr;  // the sampler's output, `output_bytes` long
    size_t output_bytes = 0;
    // Run the chain's tail beside the patches where they read none of its levels
    // (CudaBoxMips::generate_from's defer_tail); false: the whole chain first, as before
    // (kept for the benchmark's comparison).
    bool tail_beside_patches = true;
};

class CudaFrameGraph {
public:
    // Captures the pipeline (nothing runs). Throws Error, capturing nothing, for what the
    // steps themselves refuse: a frame not in CUDA memory, short rows, a null output or
    // one of the wrong size.
    explicit CudaFrameGraph(const FrameGraphDesc& desc);

    // The whole pipeline in `stream` for the frame at `frame` (null: the first one given).
    void launch(cudaStream_t stream, const void* frame = nullptr);

    static constexpr size_t kKeptGraphs = 8;
    size_t kept() const { return kept_.size(); }

private:
    CudaGraphExec capture(const void* frame) const;
    struct Kept {
        const void* frame;
        CudaGraphExec exec;
    };
    FrameGraphDesc desc_;
    std::vector<Kept> kept_;  // least recently launched first
};

}  // namespace tvlm
