#include "examples/host_renderer/cuda_frames.h"

#include "engine/core/barriers.h"
#include "cuda/cuda_check.h"
#include "interop/cuda_device.h"
#include "engine/error.h"
#include "engine/textures/transfer.h"
#include "engine/core/vk_check.h"

namespace example {

using namespace tvlm;

const char* handover_name(Handover handover) {
    return handover == Handover::zero_copy ? "CUDA, zero-copy" : "CUDA, copied";
}

namespace {

Texture exportable_copy_of(Context& context, const Texture& frame) {
    TextureDesc desc = frame.desc();
    desc.exportable = true;
    return Texture::create(context, desc);
}

CudaStream new_stream() {
    cudaStream_t s = nullptr;
    TVLM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return CudaStream(s);
}

}  // namespace

CudaFrames::CudaFrames(Context& context, Renderer& renderer, Texture& frame, const PatchLayout& layout,
                       Handover handover)
    : device_(select_cuda_device(context.device_info())),
      handover_(handover),
      frame_(frame),
      copy_(handover == Handover::copy ? exportable_copy_of(context, frame) : Texture()),
      cuda_(CudaTexture::import(handover == Handover::copy ? copy_ : frame)),
      timeline_(HostSemaphore::import(context, renderer.timeline(), HostSemaphore::Kind::timeline)),
      stream_(new_stream()),
      mips_(cuda_),
      sampler_(layout, PatchOutput{.channels = 3}),
      object_(cuda_.make_texture_object(sampler_.sampler_desc())),
      output_(layout.output_values(3)) {
    sampler_.check(cuda_.desc(), output_.bytes());
    check_vk(vkGetSemaphoreCounterValue(context.device(), renderer.timeline(), &base_), "vkGetSemaphoreCounterValue");
}

TimelineStep CudaFrames::wait_before(uint64_t f) const {
    // Zero-copy: the draw itself rewrites what CUDA reads. Copy: only the copy does.
    return {base_ + 2 * f, handover_ == Handover::zero_copy ? VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT
                                                            : VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT};
}

void CudaFrames::record(VkCommandBuffer cmd) {
    if (handover_ == Handover::copy) {
        record_copy(cmd, frame_, copy_);
        return;
    }
    // The rendered level 0 made visible, in the layout in which texturevlm hands images to CUDA.
    record_barrier(cmd, {.image = frame_.image(),
                         .old_layout = frame_.layout(),
                         .new_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL});
    frame_.set_layout(VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
}

void CudaFrames::enqueue(uint64_t f) {
    timeline_.wait(stream_.get(), base_ + 2 * f + 1);
    mips_.generate(stream_.get());
    sampler_.sample(cuda_, object_.get(), output_.data(), output_.bytes(), stream_.get());
    timeline_.signal(stream_.get(), base_ + 2 * f + 2);
}

CudaFrames::~CudaFrames() { cudaStreamSynchronize(stream_.get()); }

void CudaFrames::synchronize() const { TVLM_CUDA_CHECK(cudaStreamSynchronize(stream_.get())); }

std::vector<float> CudaFrames::patches() const {
    std::vector<float> values(output_.size());
    TVLM_CUDA_CHECK(
        cudaMemcpyAsync(values.data(), output_.data(), output_.bytes(), cudaMemcpyDeviceToHost, stream_.get()));
    synchronize();
    return values;
}

}  // namespace example
