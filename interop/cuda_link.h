#pragma once
// Synchronisation between a Vulkan context and the CUDA device that is the same GPU, with
// no host waits: two timeline semaphores, one per direction (a timeline only moves
// forward, so two producers sharing one would have to agree on every value).
//  - ready:    the context's queue timeline; Vulkan signals it on every submission, CUDA
//              streams wait on the value returned by upload()/generate_mips().
//  - released: made by Vulkan, signalled by CUDA streams when their reads are done; the
//              next Vulkan submission that overwrites a texture waits on it.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/core/context.h"
#include "interop/cuda_timeline.h"
#include "cuda_pipelines/cuda_patch_sampler.h"

namespace tvlm {

class CudaLink {
public:
    // Selects the CUDA device with the context's UUID and imports both semaphores. Throws
    // Error when no CUDA device matches or the device cannot export timeline semaphores.
    explicit CudaLink(Context& context);
    CudaLink(const CudaLink&) = delete;
    CudaLink& operator=(const CudaLink&) = delete;

    int cuda_device() const { return cuda_device_; }
    Context& context() { return context_; }

    // In-stream: later work in `stream` waits for Vulkan's submissions up to `vulkan_value`.
    void cuda_wait(cudaStream_t stream, uint64_t vulkan_value) const { ready_.wait(stream, vulkan_value); }
    // In-stream: signals that work so far in `stream` is done; returns the value to wait on.
    uint64_t cuda_signal(cudaStream_t stream);
    // The next Vulkan submission waits until CUDA signalled `released_value`.
    void vulkan_wait(uint64_t released_value);
    // Non-blocking: whether CUDA's signal of `released_value` has happened.
    bool released_reached(uint64_t released_value) const { return released_vulkan_.value() >= released_value; }

private:
    Context& context_;
    int cuda_device_;
    CudaTimeline ready_;
    TimelineSemaphore released_vulkan_;
    CudaTimeline released_;
    uint64_t released_value_ = 0;
};

// `sampler`'s patches of a Vulkan texture seen by CUDA, after an in-stream wait for the
// link's Vulkan timeline to reach `ready_value` (what upload() or generate_mips() returned):
// no host synchronisation. Checked before the wait: a refused call enqueues nothing.
void sample_after(const CudaLink& link, uint64_t ready_value, const CudaPatchSampler& sampler,
                  const CudaMipmaps& texture, cudaTextureObject_t object, void* output, size_t output_bytes,
                  cudaStream_t stream);

}  // namespace tvlm
