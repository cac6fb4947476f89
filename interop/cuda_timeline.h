#pragma once
// A Vulkan timeline semaphore imported into CUDA: stream-ordered waits and signals.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "unique_fd.h"

namespace tvlm {

class CudaTimeline {
public:
    CudaTimeline() = default;
    // Importing takes ownership of the fd on success; on failure `fd` closes it.
    static CudaTimeline import(UniqueFd fd);
    CudaTimeline(CudaTimeline&& o) noexcept;
    CudaTimeline& operator=(CudaTimeline&& o) noexcept;
    CudaTimeline(const CudaTimeline&) = delete;
    CudaTimeline& operator=(const CudaTimeline&) = delete;
    ~CudaTimeline();

    // Later work in `stream` waits until the timeline reaches `value`.
    void wait(cudaStream_t stream, uint64_t value) const;
    // Sets the timeline to `value` once earlier work in `stream` is done.
    void signal(cudaStream_t stream, uint64_t value) const;

private:
    cudaExternalSemaphore_t semaphore_ = nullptr;
};

}  // namespace tvlm
