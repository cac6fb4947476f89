#pragma once
// Move-only owner of cudaMalloc'd device memory ("no copy, to prevent performance accidents").
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "cuda/cuda_check.h"

namespace tvlm {

template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t count) : count_(count) {
        TVLM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    }
    DeviceBuffer(DeviceBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(o.count_) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        if (this != &o) {
            reset();
            data_ = std::exchange(o.data_, nullptr);
            count_ = o.count_;
        }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { reset(); }

    T* data() const { return data_; }
    size_t size() const { return count_; }
    size_t bytes() const { return count_ * sizeof(T); }
    void reset() {
        if (data_) cudaFree(data_);
        data_ = nullptr;
        count_ = 0;
    }

private:
    T* data_ = nullptr;
    size_t count_ = 0;
};

// `bytes` of host memory copied to device memory and landed when this returns, so work on
// any stream may read them. cudaMemcpy does not promise that: from pageable memory it may
// return once the bytes are staged, before the copy lands, on the legacy stream, which the
// engine's non-blocking streams do not wait for.
inline void copy_to_device_now(void* device, const void* host, size_t bytes) {
    TVLM_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, cudaStreamPerThread));
    TVLM_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}

// `bytes` of device memory zeroed, done when this returns (cudaMemset only queues it, on the
// legacy stream: see copy_to_device_now).
inline void zero_device_now(void* device, size_t bytes) {
    TVLM_CUDA_CHECK(cudaMemsetAsync(device, 0, bytes, cudaStreamPerThread));
    TVLM_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}

}  // namespace tvlm
