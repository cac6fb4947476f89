#pragma once
// The hand-off between an application's frames and CUDA: a semaphore the application
// signals from its own submissions (or the host), imported into CUDA, so that work in a
// stream waits for the frame on the GPU, with no host wait; and, the other way, CUDA
// signals it when done with the frame, for the application's next submission to wait on.
//
// The application creates the semaphore exportable, VkExportSemaphoreCreateInfo with
// handleTypes VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT (a timeline one with
// VkSemaphoreTypeCreateInfo), on a device created with VK_KHR_external_semaphore_fd (listed
// in HostVulkan::enabled_extensions).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/core/context.h"
#include "cuda/cuda_handle.h"
#include "engine/core/vulkan.h"

namespace tvlm {

class HostSemaphore {
public:
    enum class Kind { timeline, binary };

    // Exports `semaphore` as an fd and imports it into the current CUDA device (the
    // context's twin). Throws Error when the context's device cannot export semaphores.
    static HostSemaphore import(Context& context, VkSemaphore semaphore, Kind kind);

    // Later work in `stream` waits for the application: a timeline until it reaches `value`;
    // a binary semaphore until its next signal (`value` unused), which the wait consumes, as
    // a Vulkan wait does: one wait per signal.
    void wait(cudaStream_t stream, uint64_t value = 0) const;
    // Once earlier work in `stream` is done: a timeline set to `value` (above every value
    // it has had), a binary semaphore signalled (`value` unused) for one Vulkan wait.
    void signal(cudaStream_t stream, uint64_t value = 0) const;

    Kind kind() const { return kind_; }

private:
    ExternalSemaphore semaphore_;
    Kind kind_ = Kind::timeline;
};

}  // namespace tvlm
