#include "interop/textures/frame_ring.h"

#include <algorithm>
#include <string>

#include "engine/error.h"

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

template <class Done>
bool FrameRing::wait_for_other(std::unique_lock<std::mutex>& lock, const std::optional<std::thread::id>& other,
                               Done done) {
    if (done()) return true;
    if (other && *other == std::this_thread::get_id()) return false;  // it would wait for itself
    return changed_.wait_for(lock, kCrossThreadWait, done);
}

Texture& FrameRing::begin_write(uint64_t frame) {
    std::unique_lock lock(mutex_);
    producer_ = std::this_thread::get_id();
    Slot* s = by_write_.front();
    const bool free_now = s->read && (s->released == 0 || link_.released_reached(s->released));
    if (!free_now && slots_.size() < max_slots_) {
        s = &add_slot();  // grow rather than wait for CUDA
    } else {
        // A consumer on another thread is waited for; with none seen, or on this thread, the
        // frame would never be read.
        const std::optional<std::thread::id> reader = consumer_ ? consumer_ : std::optional{std::this_thread::get_id()};
        if (!wait_for_other(lock, reader, [&] { return s->read; }))
            throw Error("frame ring: every slot holds a frame CUDA has not read yet (frame " +
                        std::to_string(s->frame) +
                        " is the oldest): call end_read for frames in order, or allow more slots (max_slots)");
        link_.vulkan_wait(s->released);  // on the GPU: the next submission waits for CUDA's release
    }
    by_write_.pop_front();
    by_write_.push_back(s);
    s->frame = frame;
    s->read = false;
    return s->texture.vulkan;
}

void FrameRing::end_write(uint64_t frame, uint64_t ready) {
    {
        const std::lock_guard lock(mutex_);
        holding(frame).ready = ready;
        last_written_ = frame;
    }
    changed_.notify_all();
}

uint64_t FrameRing::written_frames(uint64_t first, uint32_t count, cudaTextureObject_t* objects) {
    const uint64_t last = first + count - 1;
    uint64_t ready = 0;
    std::unique_lock lock(mutex_);
    consumer_ = std::this_thread::get_id();
    // A producer on another thread (or none yet) is waited for; on this thread it would
    // never write the frames.
    const bool written = wait_for_other(lock, producer_, [&] { return last_written_ && *last_written_ >= last; });
    for (uint64_t f = first; f <= last; ++f) {
        const Slot& s = holding(f);
        ready = std::max(ready, s.ready);
        objects[f - first] = s.texture.object.get();
    }
    if (!written)
        throw Error("frame ring: frame " + std::to_string(last) +
                    " has no end_write yet: call end_write with "
                    "the timeline value that completes it before begin_read");
    return ready;
}

// The in-stream waits outside the lock: the producer's calls go on meanwhile.
cudaTextureObject_t FrameRing::begin_read(uint64_t frame, cudaStream_t stream) {
    cudaTextureObject_t object = 0;  // no vector: a frame at a time is the per-frame path
    link_.cuda_wait(stream, written_frames(frame, 1, &object));
    return object;
}

std::vector<cudaTextureObject_t> FrameRing::begin_read(uint64_t first, uint32_t count, cudaStream_t stream) {
    if (count == 0) throw Error("frame ring: begin_read of 0 frames: pass a count of at least 1");
    std::vector<cudaTextureObject_t> objects(count);
    link_.cuda_wait(stream, written_frames(first, count, objects.data()));
    return objects;
}

void FrameRing::end_read(uint64_t frame, cudaStream_t stream) { end_read(frame, 1, stream); }

void FrameRing::end_read(uint64_t first, uint32_t count, cudaStream_t stream) {
    if (count == 0) throw Error("frame ring: end_read of 0 frames: pass a count of at least 1");
    {
        const std::lock_guard lock(mutex_);
        for (uint64_t f = first; f < first + count; ++f) holding(f);  // throws before signalling
    }
    const uint64_t released = link_.cuda_signal(stream);  // the CUDA side's own counter
    {
        const std::lock_guard lock(mutex_);
        for (uint64_t f = first; f < first + count; ++f) {
            Slot& s = holding(f);
            s.released = released;
            s.read = true;
        }
    }
    changed_.notify_all();
}

const ImportedTexture& FrameRing::texture(uint64_t frame) const {
    const std::lock_guard lock(mutex_);
    return holding(frame).texture;
}

uint32_t FrameRing::slots() const {
    const std::lock_guard lock(mutex_);
    return static_cast<uint32_t>(slots_.size());
}

FrameRing::Slot& FrameRing::holding(uint64_t frame) {
    return const_cast<Slot&>(static_cast<const FrameRing&>(*this).holding(frame));
}

const FrameRing::Slot& FrameRing::holding(uint64_t frame) const {
    for (const Slot& s : slots_)
        if (s.frame == frame) return s;
    throw Error("frame ring holds no frame " + std::to_string(frame) +
                ": it was never written, or its slot has "
                "been rewritten since");
}

}  // namespace tvlm
