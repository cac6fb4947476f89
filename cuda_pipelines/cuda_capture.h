#pragma once
// Stream work captured once as a CUDA graph and relaunched: one launch instead of one per
// step (CudaFrameGraph, CudaVideoTexture).
#include <cuda_runtime_api.h>

#include <functional>

#include "cuda/cuda_handle.h"

namespace tvlm {

// What `record(stream)` enqueues, captured on a stream of its own in thread-local mode
// (other threads' CUDA calls go on), instantiated; nothing runs. A throw from `record`
// ends the capture, drops what it made and propagates.
CudaGraphExec capture_graph(const std::function<void(cudaStream_t)>& record);

}  // namespace tvlm
