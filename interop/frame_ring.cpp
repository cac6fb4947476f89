#include "frame_ring.h"

#include "error.h"

namespace tvlm {

FrameRing::FrameRing(CudaLink& link, const TextureDesc& desc, uint32_t slots, const CudaSamplerDesc& sampler)
    : link_(link) {
    if (slots == 0) throw Error("a frame ring needs at least 1 slot");
    for (uint32_t i = 0; i < slots; ++i) slots_.push_back({ImportedTexture::create(link.context(), desc, sampler)});
}

Texture& FrameRing::begin_write(uint64_t frame) {
    Slot& s = slot(frame);
    link_.vulkan_wait(s.released);
    return s.texture.vulkan;
}

void FrameRing::end_write(uint64_t frame, uint64_t ready) { slot(frame).ready = ready; }

cudaTextureObject_t FrameRing::begin_read(uint64_t frame, cudaStream_t stream) {
    Slot& s = slot(frame);
    link_.cuda_wait(stream, s.ready);
    return s.texture.object.handle();
}

void FrameRing::end_read(uint64_t frame, cudaStream_t stream) { slot(frame).released = link_.cuda_signal(stream); }

}  // namespace tvlm
