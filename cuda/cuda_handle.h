#pragma once
// One move-only owner for every CUDA runtime handle: destroyed once, by the function that
// matches how it was made (cudaDestroyTextureObject, cudaFreeMipmappedArray, ...).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "cuda/cuda_check.h"

namespace tvlm {

template <class Handle, cudaError_t (*Destroy)(Handle)>
class CudaHandle {
public:
    CudaHandle() = default;
    explicit CudaHandle(Handle handle) : handle_(handle) {}  // takes ownership
    CudaHandle(CudaHandle&& o) noexcept : handle_(std::exchange(o.handle_, Handle{})) {}
    CudaHandle& operator=(CudaHandle&& o) noexcept {
        if (this != &o) {
            reset();
            handle_ = std::exchange(o.handle_, Handle{});
        }
        return *this;
    }
    CudaHandle(const CudaHandle&) = delete;
    CudaHandle& operator=(const CudaHandle&) = delete;
    ~CudaHandle() { reset(); }

    Handle handle() const { return handle_; }
    explicit operator bool() const { return handle_ != Handle{}; }
    void reset() {
        if (handle_ != Handle{}) Destroy(handle_);  // errors at teardown have no one to go to
        handle_ = Handle{};
    }

private:
    Handle handle_{};
};

using TextureObject = CudaHandle<cudaTextureObject_t, cudaDestroyTextureObject>;
using SurfaceObject = CudaHandle<cudaSurfaceObject_t, cudaDestroySurfaceObject>;
using ExternalMemory = CudaHandle<cudaExternalMemory_t, cudaDestroyExternalMemory>;
using MipmappedArray = CudaHandle<cudaMipmappedArray_t, cudaFreeMipmappedArray>;
using ExternalSemaphore = CudaHandle<cudaExternalSemaphore_t, cudaDestroyExternalSemaphore>;
using CudaStream = CudaHandle<cudaStream_t, cudaStreamDestroy>;
using CudaEvent = CudaHandle<cudaEvent_t, cudaEventDestroy>;
using PinnedMemory = CudaHandle<void*, cudaFreeHost>;
using CudaGraph = CudaHandle<cudaGraph_t, cudaGraphDestroy>;
using CudaGraphExec = CudaHandle<cudaGraphExec_t, cudaGraphExecDestroy>;

// A non-blocking stream: no implicit ordering with the legacy default stream.
inline CudaStream make_stream() {
    cudaStream_t stream = nullptr;
    TVLM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return CudaStream(stream);
}

// An event for ordering and host waits (no timing: cheaper to record and wait on).
inline CudaEvent make_event() {
    cudaEvent_t event = nullptr;
    TVLM_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return CudaEvent(event);
}

// Page-locked host memory: host <-> device copies at full speed, asynchronous.
inline PinnedMemory allocate_pinned(size_t bytes) {
    void* memory = nullptr;
    TVLM_CUDA_CHECK(cudaMallocHost(&memory, bytes));
    return PinnedMemory(memory);
}

}  // namespace tvlm
