#pragma once
// What every benchmark suite runs on: the Vulkan context (--device), its CUDA link, one
// non-blocking stream (owned here) and the matched CUDA device's properties.
#include <cuda_runtime_api.h>

#include "args.h"
#include "context.h"
#include "cuda_link.h"

namespace tvlm {

class BenchGpu {
public:
    explicit BenchGpu(const Args& args);
    BenchGpu(const BenchGpu&) = delete;
    BenchGpu& operator=(const BenchGpu&) = delete;
    ~BenchGpu();

    Context context;
    CudaLink link;
    cudaStream_t stream = nullptr;
    cudaDeviceProp prop{};
};

}  // namespace tvlm
