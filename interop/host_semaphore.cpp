#include "host_semaphore.h"

#include "cuda_check.h"
#include "error.h"
#include "unique_fd.h"
#include "vk_check.h"

namespace tvlm {

HostSemaphore HostSemaphore::import(Context& context, VkSemaphore semaphore, Kind kind) {
    if (!semaphore) throw Error("no VkSemaphore to import: pass the application's semaphore");
    if (!context.semaphore_export())
        throw Error("the device cannot export semaphores: create it with VK_KHR_external_semaphore_fd (and list it "
                    "in HostVulkan::enabled_extensions)");
    VkSemaphoreGetFdInfoKHR info{VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
    info.semaphore = semaphore;
    info.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    int raw = -1;
    check_vk(vkGetSemaphoreFdKHR(context.device(), &info, &raw),
             "vkGetSemaphoreFdKHR (was the semaphore created with VkExportSemaphoreCreateInfo, OPAQUE_FD?)");
    UniqueFd fd(raw);
    cudaExternalSemaphoreHandleDesc desc{};
    desc.type = kind == Kind::timeline ? cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd
                                       : cudaExternalSemaphoreHandleTypeOpaqueFd;
    desc.handle.fd = fd.get();
    cudaExternalSemaphore_t imported = nullptr;
    TVLM_CUDA_CHECK(cudaImportExternalSemaphore(&imported, &desc));
    fd.release();  // CUDA owns the fd now
    HostSemaphore s;
    s.semaphore_ = ExternalSemaphore(imported);
    s.kind_ = kind;
    return s;
}

void HostSemaphore::wait(cudaStream_t stream, uint64_t value) const {
    cudaExternalSemaphoreWaitParams params{};
    params.params.fence.value = kind_ == Kind::timeline ? value : 0;
    const cudaExternalSemaphore_t semaphore = semaphore_.handle();
    TVLM_CUDA_CHECK(cudaWaitExternalSemaphoresAsync(&semaphore, &params, 1, stream));
}

}  // namespace tvlm
