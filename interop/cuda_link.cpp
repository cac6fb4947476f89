#include "interop/cuda_link.h"

#include "interop/cuda_device.h"
#include "engine/error.h"

namespace tvlm {

namespace {
Context& require_semaphore_export(Context& context) {
    if (!context.semaphore_export())
        throw Error("Vulkan device '" + context.device_info().name +
                    "' cannot export timeline semaphores "
                    "(VK_KHR_external_semaphore_fd): Vulkan -> CUDA interop needs an NVIDIA GPU");
    return context;
}
}  // namespace

CudaLink::CudaLink(Context& context)
    : context_(require_semaphore_export(context)),
      cuda_device_(select_cuda_device(context.device_info())),
      ready_(CudaTimeline::import(context.queue().timeline().export_fd())),
      released_vulkan_(context.device(), 0, true),
      released_(CudaTimeline::import(released_vulkan_.export_fd())) {}

uint64_t CudaLink::cuda_signal(cudaStream_t stream) {
    released_.signal(stream, ++released_value_);
    return released_value_;
}

void CudaLink::vulkan_wait(uint64_t released_value) {
    if (released_value == 0) return;
    context_.queue().wait_before_next({released_vulkan_.handle(), released_value});
}

void sample_after(const CudaLink& link, uint64_t ready_value, const CudaPatchSampler& sampler,
                  const CudaMipmaps& texture, cudaTextureObject_t object, void* output, size_t output_bytes,
                  cudaStream_t stream) {
    sampler.check(texture.desc, {output, output_bytes, sampler.output()});
    link.cuda_wait(stream, ready_value);
    sampler.sample(texture, object, output, output_bytes, stream);
}

}  // namespace tvlm
