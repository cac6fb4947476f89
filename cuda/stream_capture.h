#pragma once
// Whether work queued on a stream now would be captured into a CUDA graph: such work may
// not wait on events recorded outside the capture, nor be waited on from outside it.
#include <cuda_runtime_api.h>

#include "cuda/cuda_check.h"

namespace tvlm {

inline bool stream_capturing(cudaStream_t stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    const cudaError_t e = cudaStreamIsCapturing(stream, &status);
    // The legacy stream while another stream captures in global mode: work queued on it now
    // would join that capture, so it counts as capturing.
    if (e == cudaErrorStreamCaptureImplicit) {
        (void)cudaGetLastError();  // answered here, not left for the next call
        return true;
    }
    TVLM_CUDA_CHECK(e);
    return status != cudaStreamCaptureStatusNone;
}

}  // namespace tvlm
