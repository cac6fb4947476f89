#include "cuda_timeline.h"

#include "cuda_check.h"
#include "error.h"

namespace tvlm {

CudaTimeline CudaTimeline::import(UniqueFd fd) {
    if (!fd.valid()) throw Error("cannot import a timeline semaphore into CUDA: the fd is not valid");
    cudaExternalSemaphoreHandleDesc desc{};
    desc.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
    desc.handle.fd = fd.get();
    cudaExternalSemaphore_t semaphore = nullptr;
    TVLM_CUDA_CHECK(cudaImportExternalSemaphore(&semaphore, &desc));
    fd.release();  // CUDA owns the fd now
    CudaTimeline t;
    t.semaphore_ = ExternalSemaphore(semaphore);
    return t;
}

void CudaTimeline::wait(cudaStream_t stream, uint64_t value) const {
    cudaExternalSemaphoreWaitParams params{};
    params.params.fence.value = value;
    const cudaExternalSemaphore_t semaphore = semaphore_.handle();
    TVLM_CUDA_CHECK(cudaWaitExternalSemaphoresAsync(&semaphore, &params, 1, stream));
}

void CudaTimeline::signal(cudaStream_t stream, uint64_t value) const {
    cudaExternalSemaphoreSignalParams params{};
    params.params.fence.value = value;
    const cudaExternalSemaphore_t semaphore = semaphore_.handle();
    TVLM_CUDA_CHECK(cudaSignalExternalSemaphoresAsync(&semaphore, &params, 1, stream));
}

}  // namespace tvlm
