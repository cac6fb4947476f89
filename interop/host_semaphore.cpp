#include "interop/host_semaphore.h"

#include "interop/cuda_timeline.h"
#include "engine/error.h"
#include "engine/core/timeline.h"

namespace tvlm {

HostSemaphore HostSemaphore::import(Context& context, VkSemaphore semaphore, Kind kind) {
    if (!semaphore) throw Error("no VkSemaphore to import: pass the application's semaphore");
    if (!context.semaphore_export())
        throw Error(
            "the device cannot export semaphores: create it with VK_KHR_external_semaphore_fd (and list it "
            "in HostVulkan::enabled_extensions)");
    HostSemaphore s;
    s.semaphore_ = import_cuda_semaphore(export_semaphore_fd(context.device(), semaphore), kind == Kind::timeline);
    s.kind_ = kind;
    return s;
}

void HostSemaphore::wait(cudaStream_t stream, uint64_t value) const {
    wait_cuda_semaphore(semaphore_, stream, kind_ == Kind::timeline ? value : 0);
}

void HostSemaphore::signal(cudaStream_t stream, uint64_t value) const {
    signal_cuda_semaphore(semaphore_, stream, kind_ == Kind::timeline ? value : 0);
}

}  // namespace tvlm
