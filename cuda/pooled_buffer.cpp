#include "cuda/pooled_buffer.h"

#include <map>
#include <mutex>
#include <utility>

#include "cuda/cuda_check.h"
#include "cuda/cuda_device_guard.h"
#include "cuda/stream_capture.h"

namespace tvlm {

namespace {

struct DeviceMemory {
    cudaMemPool_t pool = nullptr;
    cudaStream_t release = nullptr;
};

// Made on first use, kept for the process (never destroyed: buffers may be freed up to its
// exit, after static objects are gone).
DeviceMemory& memory_of(int device) {
    static auto* mutex = new std::mutex;
    static auto* devices = new std::map<int, DeviceMemory>;
    const std::lock_guard<std::mutex> lock(*mutex);
    DeviceMemory& m = (*devices)[device];
    if (!m.pool) {
        const DeviceGuard guard(device);
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        cudaMemPool_t pool = nullptr;
        TVLM_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
        uint64_t keep = PooledBuffer::kKeptBytes;
        TVLM_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
        TVLM_CUDA_CHECK(cudaStreamCreateWithFlags(&m.release, cudaStreamNonBlocking));
        m.pool = pool;
    }
    return m;
}

}  // namespace

cudaStream_t release_stream(int device) { return memory_of(device).release; }

PooledBuffer::PooledBuffer(size_t bytes, cudaStream_t stream) : bytes_(bytes) {
    TVLM_CUDA_CHECK(cudaGetDevice(&device_));
    if (!bytes) return;
    pooled_ = !stream_capturing(stream);
    if (pooled_) TVLM_CUDA_CHECK(cudaMallocFromPoolAsync(&data_, bytes, memory_of(device_).pool, stream));
    else TVLM_CUDA_CHECK(cudaMalloc(&data_, bytes));
}

PooledBuffer::PooledBuffer(PooledBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      bytes_(std::exchange(o.bytes_, 0)),
      device_(o.device_),
      pooled_(o.pooled_) {}

PooledBuffer& PooledBuffer::operator=(PooledBuffer&& o) noexcept {
    if (this != &o) {
        free_on_release_stream();
        data_ = std::exchange(o.data_, nullptr);
        bytes_ = std::exchange(o.bytes_, 0);
        device_ = o.device_;
        pooled_ = o.pooled_;
    }
    return *this;
}

PooledBuffer::~PooledBuffer() { free_on_release_stream(); }

void PooledBuffer::free_on_release_stream() noexcept {
    if (!data_) return;
    // No error is thrown from here: at exit the driver may be gone already.
    if (pooled_) (void)cudaFreeAsync(data_, memory_of(device_).release);
    else (void)cudaFree(data_);
    data_ = nullptr;
    bytes_ = 0;
}

void PooledBuffer::release(cudaStream_t stream) {
    if (data_) {
        if (pooled_) TVLM_CUDA_CHECK(cudaFreeAsync(data_, stream));
        else TVLM_CUDA_CHECK(cudaFree(data_));
    }
    data_ = nullptr;
    bytes_ = 0;
}

}  // namespace tvlm
