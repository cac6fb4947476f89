#include "frame_ring.h"

#include <string>

#include "error.h"

namespace tvlm {

FrameRing::FrameRing(CudaLink& link, const TextureDesc& desc, uint32_t slots, const CudaSamplerDesc& sampler,
                     uint32_t max_slots)
    : link_(link), desc_(desc), sampler_(sampler), max_slots_(max_slots ? max_slots : slots) {
    if (slots == 0) throw Error("a frame ring needs at least 1 slot");
    if (max_slots_ < slots)
        throw Error("a frame ring's max_slots (" + std::to_string(max_slots_) + ") is below its " +
                    std::to_string(slots) + " slots: pass 0 for a fixed ring, or at least `slots`");
    for (uint32_t i = 0; i < slots; ++i) add_slot();
}

FrameRing::Slot& FrameRing::add_slot() {
    Slot& s = slots_.emplace_back(Slot{ImportedTexture::create(link_.context(), desc_, sampler_)});
    by_write_.push_front(&s);  // never written: the first to use
    return s;
}

Texture& FrameRing::begin_write(uint64_t frame) {
    Slot* s = by_write_.front();
    const bool free_now = s->read && (s->released == 0 || link_.released_reached(s->released));
    if (!free_now && slots_.size() < max_slots_) {
        s = &add_slot();  // grow rather than wait for CUDA
    } else if (!s->read) {
        throw Error("frame ring: every slot holds a frame CUDA has not read yet (frame " + std::to_string(s->frame) +
                    " is the oldest): call end_read for frames in order, or allow more slots (max_slots)");
    } else {
        link_.vulkan_wait(s->released);  // on the GPU: the next submission waits for CUDA's release
    }
    by_write_.pop_front();
    by_write_.push_back(s);
    s->frame = frame;
    s->read = false;
    return s->texture.vulkan;
}

void FrameRing::end_write(uint64_t frame, uint64_t ready) { holding(frame).ready = ready; }

cudaTextureObject_t FrameRing::begin_read(uint64_t frame, cudaStream_t stream) {
    Slot& s = holding(frame);
    link_.cuda_wait(stream, s.ready);
    return s.texture.object.handle();
}

void FrameRing::end_read(uint64_t frame, cudaStream_t stream) {
    Slot& s = holding(frame);
    s.released = link_.cuda_signal(stream);
    s.read = true;
}

const ImportedTexture& FrameRing::texture(uint64_t frame) const { return holding(frame).texture; }

FrameRing::Slot& FrameRing::holding(uint64_t frame) {
    return const_cast<Slot&>(static_cast<const FrameRing&>(*this).holding(frame));
}

const FrameRing::Slot& FrameRing::holding(uint64_t frame) const {
    for (const Slot& s : slots_)
        if (s.frame == frame) return s;
    throw Error("frame ring holds no frame " + std::to_string(frame) + ": it was never written, or its slot has "
                "been rewritten since");
}

}  // namespace tvlm
