#pragma once
// Makes a CUDA device current for a scope and restores the caller's device after it: for
// code that drives several GPUs from one thread (MultiGpuPipeline, the Python bindings).
#include <cuda_runtime_api.h>

#include "cuda/cuda_check.h"

namespace tvlm {

class DeviceGuard {
public:
    explicit DeviceGuard(int device) {
        TVLM_CUDA_CHECK(cudaGetDevice(&previous_));
        if (previous_ != device) TVLM_CUDA_CHECK(cudaSetDevice(device));
    }
    ~DeviceGuard() {
        int now = previous_;
        cudaGetDevice(&now);
        if (now != previous_) cudaSetDevice(previous_);
    }
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int previous_ = 0;
};

}  // namespace tvlm
