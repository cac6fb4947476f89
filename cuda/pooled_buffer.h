#pragma once
// Device memory allocated and freed in stream order from a pool kept per device: neither
// waits for the device. cudaFree waits for all of the device's work, so an object dropped
// with it while a server's kernels are queued (a resizer a processor cache lets go) stalls
// the host until they finish; cudaFreeAsync queues the free behind the work that may still
// read the memory. The pool keeps up to kKeptBytes of freed memory for the next
// allocations, as a caching allocator does.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tvlm {

// The stream the pooled buffers of `device` are freed on when their owner goes: an owner
// makes it wait for its last work (an event) before its buffers are destroyed. Made once
// per device, non-blocking, kept for the process.
cudaStream_t release_stream(int device);

class PooledBuffer {
public:
    // Freed memory the pools keep for later allocations (more is returned to the driver at
    // the device's next synchronization).
    static constexpr uint64_t kKeptBytes = uint64_t{256} << 20;

    PooledBuffer() = default;
    // `bytes` on the current device, usable by the work queued on `stream` from now on (and by
    // work ordered after it). Inside a stream capture the memory comes from cudaMalloc: a
    // pooled allocation made there would belong to the captured graph.
    PooledBuffer(size_t bytes, cudaStream_t stream);
    PooledBuffer(PooledBuffer&& o) noexcept;
    PooledBuffer& operator=(PooledBuffer&& o) noexcept;
    PooledBuffer(const PooledBuffer&) = delete;
    PooledBuffer& operator=(const PooledBuffer&) = delete;
    // Freed on the device's release_stream(), in its order: the owner makes that stream wait
    // for the work reading the memory first.
    ~PooledBuffer();

    void* data() const { return data_; }
    size_t bytes() const { return bytes_; }
    // Freed after the work queued on `stream` so far (an owner replacing its buffer within a
    // run on that stream); empty afterwards.
    void release(cudaStream_t stream);

private:
    void free_on_release_stream() noexcept;

    void* data_ = nullptr;
    size_t bytes_ = 0;
    int device_ = 0;
    bool pooled_ = false;  // from the pool (freed in stream order), else from cudaMalloc
};

}  // namespace tvlm
