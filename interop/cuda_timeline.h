#pragma once
// A Vulkan timeline semaphore imported into CUDA: stream-ordered waits and signals.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/cuda_handle.h"
#include "engine/core/unique_fd.h"

namespace tvlm {

// A semaphore's fd imported into CUDA (`timeline`: a timeline semaphore, else binary);
// the import takes the fd on success, on failure `fd` closes it.
ExternalSemaphore import_cuda_semaphore(UniqueFd fd, bool timeline);
// Later work in `stream` waits for the semaphore: a timeline until `value`; a binary one
// until its next signal (value unused).
void wait_cuda_semaphore(const ExternalSemaphore& semaphore, cudaStream_t stream, uint64_t value);
// Once earlier work in `stream` is done: a timeline set to `value`; a binary one signalled.
void signal_cuda_semaphore(const ExternalSemaphore& semaphore, cudaStream_t stream, uint64_t value);

class CudaTimeline {
public:
    // Importing takes ownership of the fd on success; on failure `fd` closes it.
    static CudaTimeline import(UniqueFd fd);

    // Later work in `stream` waits until the timeline reaches `value`.
    void wait(cudaStream_t stream, uint64_t value) const;
    // Sets the timeline to `value` once earlier work in `stream` is done.
    void signal(cudaStream_t stream, uint64_t value) const;

private:
    ExternalSemaphore semaphore_;
};

}  // namespace tvlm
