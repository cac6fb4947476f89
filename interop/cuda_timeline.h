#pragma once
// A Vulkan timeline semaphore imported into CUDA: stream-ordered waits and signals.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda_handle.h"
#include "unique_fd.h"

namespace tvlm {

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
