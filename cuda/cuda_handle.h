#pragma once
// Every CUDA runtime handle's owner: engine/unique_handle.h's UniqueHandle with the function
// that matches how the handle was made (cudaDestroyTextureObject, cudaFreeMipmappedArray, ...).
#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda/cuda_check.h"
#include "engine/unique_handle.h"

namespace tvlm {

// How a CUDA runtime handle is released: by the function that matches how it was made.
template <auto Destroy>
struct CudaRelease {
    template <class Handle>
    void operator()(Handle handle) const {
        Destroy(handle);  // errors at teardown have no one to go to
    }
};

template <class Handle, auto Destroy>
using CudaHandle = UniqueHandle<Handle, CudaRelease<Destroy>>;

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
