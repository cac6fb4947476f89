#include "interop/cuda_timeline.h"

#include <utility>

#include "cuda/cuda_check.h"
#include "engine/error.h"

namespace tvlm {

ExternalSemaphore import_cuda_semaphore(UniqueFd fd, bool timeline) {
    if (!fd.valid()) throw Error("cannot import a semaphore into CUDA: the fd is not valid");
    cudaExternalSemaphoreHandleDesc desc{};
    desc.type = timeline ? cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd : cudaExternalSemaphoreHandleTypeOpaqueFd;
    desc.handle.fd = fd.get();
    cudaExternalSemaphore_t semaphore = nullptr;
    TVLM_CUDA_CHECK(cudaImportExternalSemaphore(&semaphore, &desc));
    fd.release();  // CUDA owns the fd now
    return ExternalSemaphore(semaphore);
}

void wait_cuda_semaphore(const ExternalSemaphore& semaphore, cudaStream_t stream, uint64_t value) {
    cudaExternalSemaphoreWaitParams params{};
    params.params.fence.value = value;  // ignored for binary semaphores
    const cudaExternalSemaphore_t handle = semaphore.get();
    TVLM_CUDA_CHECK(cudaWaitExternalSemaphoresAsync(&handle, &params, 1, stream));
}

void signal_cuda_semaphore(const ExternalSemaphore& semaphore, cudaStream_t stream, uint64_t value) {
    cudaExternalSemaphoreSignalParams params{};
    params.params.fence.value = value;  // ignored for binary semaphores
    const cudaExternalSemaphore_t handle = semaphore.get();
    TVLM_CUDA_CHECK(cudaSignalExternalSemaphoresAsync(&handle, &params, 1, stream));
}

CudaTimeline CudaTimeline::import(UniqueFd fd) {
    CudaTimeline t;
    t.semaphore_ = import_cuda_semaphore(std::move(fd), true);
    return t;
}

void CudaTimeline::wait(cudaStream_t stream, uint64_t value) const { wait_cuda_semaphore(semaphore_, stream, value); }

void CudaTimeline::signal(cudaStream_t stream, uint64_t value) const {
    signal_cuda_semaphore(semaphore_, stream, value);
}

}  // namespace tvlm
