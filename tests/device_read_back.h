#pragma once
// A device buffer's values on the host, after the work queued on `stream` before the copy:
// what the CUDA tests compare with their references.
#include <cuda_runtime_api.h>

#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"

namespace tvlm {

template <class T>
std::vector<T> read_back(const DeviceBuffer<T>& values, cudaStream_t stream) {
    std::vector<T> host(values.size());
    TVLM_CUDA_CHECK(cudaMemcpyAsync(host.data(), values.data(), values.bytes(), cudaMemcpyDeviceToHost, stream));
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
    return host;
}

}  // namespace tvlm
