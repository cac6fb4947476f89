#include "cuda_timeline.h"

#include <utility>

#include "cuda_check.h"
#include "error.h"

namespace tvlm {

CudaTimeline CudaTimeline::import(UniqueFd fd) {
    if (!fd.valid()) throw Error("cannot import a timeline semaphore into CUDA: the fd is not valid");
    cudaExternalSemaphoreHandleDesc desc{};
    desc.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
    desc.handle.fd = fd.get();
    CudaTimeline t;
    TVLM_CUDA_CHECK(cudaImportExternalSemaphore(&t.semaphore_, &desc));
    fd.release();  // CUDA owns the fd now
    return t;
}

CudaTimeline::CudaTimeline(CudaTimeline&& o) noexcept : semaphore_(std::exchange(o.semaphore_, nullptr)) {}
CudaTimeline& CudaTimeline::operator=(CudaTimeline&& o) noexcept {
    if (this != &o) {
        if (semaphore_) cudaDestroyExternalSemaphore(semaphore_);
        semaphore_ = std::exchange(o.semaphore_, nullptr);
    }
    return *this;
}
CudaTimeline::~CudaTimeline() {
    if (semaphore_) cudaDestroyExternalSemaphore(semaphore_);
}

void CudaTimeline::wait(cudaStream_t stream, uint64_t value) const {
    cudaExternalSemaphoreWaitParams params{};
    params.params.fence.value = value;
    TVLM_CUDA_CHECK(cudaWaitExternalSemaphoresAsync(&semaphore_, &params, 1, stream));
}

void CudaTimeline::signal(cudaStream_t stream, uint64_t value) const {
    cudaExternalSemaphoreSignalParams params{};
    params.params.fence.value = value;
    TVLM_CUDA_CHECK(cudaSignalExternalSemaphoresAsync(&semaphore_, &params, 1, stream));
}

}  // namespace tvlm
