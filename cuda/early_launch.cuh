#pragma once
// Programmatic dependent launch (Hopper): a kernel launched "early" may start while the
// kernel before it on the stream still runs, so its launch latency overlaps that kernel
// instead of following it. Such a kernel calls await_previous_kernel() before it reads
// anything the kernel before it wrote: the wait returns once that kernel has finished and
// its writes are visible. Without the launch attribute (or before sm_90) it returns at once.
// The wait also lets the next early launch begin: every kernel that uses it is itself a
// kernel the next one may overlap.
#include <cuda_runtime_api.h>

#include "cuda/cuda_check.h"

namespace tvlm {

__device__ inline void await_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion();
    cudaGridDependencySynchronize();
#endif
}

// The same in the other order, for a kernel launched early after work it does not know (a
// box chain's first pass): a kernel launched early after it starts only once that work is
// done, so it may write ahead what that work might read (box_packed_one_tile_kernel), and at
// most one launch at a time waits ahead of the work running (where each triggered at once, a
// stream of chains ran slower: waiting chains piled up).
__device__ inline void await_previous_kernel_then_allow_next() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
#endif
}

// Its two halves, for a kernel with work that reads nothing the kernel before it wrote: it
// lets the next early launch begin at once, and waits before it ends, so that a kernel
// awaiting it still finds every earlier kernel finished.
__device__ inline void allow_next_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaTriggerProgrammaticLaunchCompletion();
#endif
}
__device__ inline void wait_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cudaGridDependencySynchronize();
#endif
}

// `kernel<<<grid, block, shared_bytes, stream>>>(args...)`, allowed to start before the
// kernel before it finishes where `early` (the kernel must await_previous_kernel() first).
// The attribute is passed also when `early` is false: without it, two-launch box chains
// were slower.
template <class... Params, class... Args>
void launch_kernel_early(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, bool early,
                         Args... args) {
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = early ? 1 : 0;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    TVLM_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
}

}  // namespace tvlm
