#pragma once
// Frames in pageable host memory (a decoder's or NumPy's) to CUDA memory near the PCIe
// rate. CUDA copies from pageable memory through its own small staging buffers, one CPU
// thread at a time, no faster than PyTorch's .to("cuda") and far below the bus.
// Here the frame is cut into chunks; for each chunk, several host threads copy their
// stripes into a pinned buffer, and the GPU copies it to the device while the threads fill
// the next buffer. Only the host copy is waited for: copy() returns when `src` may be
// reused; the device copies are ordered in the caller's stream. One caller at a time: the
// buffers and threads belong to one copy while it runs.
#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda/cuda_handle.h"

namespace tvlm {

class PinnedStaging {
public:
    // `threads` 0: half the host's cores, 2 to 8. Throws Error for a chunk or buffer count
    // of 0.
    explicit PinnedStaging(size_t chunk_bytes = size_t{8} << 20, uint32_t buffers = 3, uint32_t threads = 0);
    PinnedStaging(const PinnedStaging&) = delete;
    PinnedStaging& operator=(const PinnedStaging&) = delete;
    ~PinnedStaging();

    // `bytes` from host memory at `src` to CUDA memory at `dst`, the device copies in
    // `stream`. Returns once every byte of `src` has been read. Throws Error for null
    // pointers (0 bytes copy nothing).
    void copy(void* dst, const void* src, size_t bytes, cudaStream_t stream);

    uint32_t threads() const { return uint32_t(workers_.size()) + 1; }  // the caller's thread too

private:
    void work(uint32_t index);
    // Copies `bytes` from `src` into `dst` split across the workers and this thread.
    void parallel_copy(void* dst, const void* src, size_t bytes);

    size_t chunk_bytes_;
    std::vector<PinnedMemory> buffers_;
    std::vector<CudaEvent> free_;  // recorded after each buffer's device copy
    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable start_, done_;
    uint64_t generation_ = 0;  // one per parallel_copy; workers run each once
    uint32_t pending_ = 0;     // workers still copying the current generation
    bool stopping_ = false;
    uint8_t* job_dst_ = nullptr;
    const uint8_t* job_src_ = nullptr;
    size_t job_bytes_ = 0;
};

}  // namespace tvlm
