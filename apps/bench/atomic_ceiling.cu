// A bench kernel: sm_90's float4 atomicAdd at a list of float4 indices (atomic_ceiling.h).
#include "apps/bench/atomic_ceiling.h"

#include "cuda/cuda_check.h"

namespace tvlm {

namespace {

__global__ void add_ones_kernel(float4* base, const uint32_t* index, size_t count) {
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= count) return;
#if __CUDA_ARCH__ >= 900
    atomicAdd(base + index[i], float4{1, 1, 1, 1});
#else
    float* at = reinterpret_cast<float*>(base + index[i]);
    for (int c = 0; c < 4; ++c) atomicAdd(at + c, 1.f);
#endif
}

}  // namespace

void add_ones_at(float* base, const uint32_t* index, size_t count, cudaStream_t stream) {
    if (count == 0) return;
    constexpr unsigned kBlock = 256;
    add_ones_kernel<<<unsigned((count + kBlock - 1) / kBlock), kBlock, 0, stream>>>(reinterpret_cast<float4*>(base),
                                                                                    index, count);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tvlm
