#pragma once
// Turns CUDA runtime failures into tvlm::Error with the call text, file and line.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace tvlm {

[[noreturn]] void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line);

}  // namespace tvlm

#define TVLM_CUDA_CHECK(call)                                                                                         \
    do {                                                                                                              \
        const cudaError_t tvlm_cuda_status_ = (call);                                                                 \
        if (tvlm_cuda_status_ != cudaSuccess) ::tvlm::throw_cuda_error(tvlm_cuda_status_, #call, __FILE__, __LINE__); \
    } while (0)
