#pragma once
// A non-blocking CUDA stream owned by a test case.
#include <cuda_runtime_api.h>

#include "cuda_check.h"

namespace tvlm::test {

struct Stream {
    cudaStream_t handle = nullptr;
    Stream() { TVLM_CUDA_CHECK(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking)); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream() { cudaStreamDestroy(handle); }
};

}  // namespace tvlm::test
