#pragma once
// A ring of imported textures for video: Vulkan writes frame f into a slot while CUDA
// reads earlier frames. All ordering is on the GPU through the CudaLink's timelines: CUDA
// waits until frame f is ready; Vulkan's first submission for frame f waits until CUDA
// released the frame that used the slot before. No host waits.
//
// Elastic: where the slot to be rewritten is not released yet (a non-blocking counter
// read), the ring adds a slot instead of making Vulkan wait, up to `max_slots`. Why: the
// GPU's switches between the Vulkan and CUDA contexts cost far more than a frame's work
// (docs/benchmarks.md, "Hand-over"), and a ring of n slots lets it run up to n frames of one
// side per switch, where a 2-slot ring pays two switches every two frames. Slots cost a
// texture each, so the growth is bounded.
//
// Batches: a producer that renders several frames in one submission ends each of them
// with that submission's timeline value, and the consumer takes them together
// (begin_read / end_read with a count): one in-stream wait and one release for the batch.
// A stream of frames pays the driver host time per Vulkan submission with a CUDA kernel
// behind it before anything is handed over, and the hand-over more (docs/benchmarks.md,
// "Hand-over"); batches of k divide both by k.
//
// Two threads: the Vulkan side (begin_write, end_write) may run on a producer thread and
// the CUDA side (begin_read, end_read) on a consumer thread, the way a renderer and a model
// run (it is no faster than one thread: docs/benchmarks.md, "Hand-over"). Across threads
// the sides wait for each other on the host where they must: the consumer for a frame not written yet, the producer (a full ring that
// cannot grow) for the consumer's end_read. On one thread those would never end, so there
// they throw, as they do after kCrossThreadWait. A consumer thread makes the link's device
// current first (cudaSetDevice(link.cuda_device())): CUDA calls run on the thread's device.
#include <cuda_runtime_api.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "interop/cuda_link.h"
#include "interop/textures/imported_texture.h"

namespace tvlm {

class FrameRing {
public:
    // Starts with `slots` textures of `desc`; `max_slots` 0: fixed at `slots`. Throws Error
    // for 0 slots or a maximum below `slots`.
    FrameRing(CudaLink& link, const TextureDesc& desc, uint32_t slots, const CudaSamplerDesc& sampler = {},
              uint32_t max_slots = 0);

    // Vulkan side of frame f (frames written in increasing order): the texture to write. The
    // next Vulkan submission (the upload) waits until CUDA released the frame that used the
    // slot before, unless the ring could grow instead. Throws Error when every slot holds a
    // frame CUDA has not read yet (end_read) and the ring cannot grow.
    Texture& begin_write(uint64_t frame);
    // After the frame's upload and mips: `ready` is the timeline value that completes them.
    void end_write(uint64_t frame, uint64_t ready);
    // CUDA side: later work in `stream` waits for the frame; its texture object.
    cudaTextureObject_t begin_read(uint64_t frame, cudaStream_t stream);
    // CUDA side of frames first .. first + count - 1 at once: one in-stream wait, for the
    // latest of their timeline values, covers them all (a timeline only moves forward).
    // Their texture objects, in frame order. Throws Error for a count of 0.
    std::vector<cudaTextureObject_t> begin_read(uint64_t first, uint32_t count, cudaStream_t stream);
    // After the kernels that read the frame: its slot may be rewritten.
    void end_read(uint64_t frame, cudaStream_t stream);
    // After the kernels that read frames first .. first + count - 1: one release signal
    // for all of them. Throws Error, before signalling, for a frame the ring does not hold.
    void end_read(uint64_t first, uint32_t count, cudaStream_t stream);

    // Frame f's slot (for its CUDA view: size, layers, array). Throws Error for a frame
    // the ring does not hold.
    const ImportedTexture& texture(uint64_t frame) const;
    uint32_t slots() const;
    uint32_t max_slots() const { return max_slots_; }

    // How long one side waits for the other thread before it throws.
    static constexpr std::chrono::seconds kCrossThreadWait{10};

private:
    struct Slot {
        ImportedTexture texture;
        uint64_t frame = UINT64_MAX;  // the frame it holds
        uint64_t ready = 0;           // Vulkan timeline value at which that frame is complete
        uint64_t released = 0;        // CUDA "released" value after its last read
        bool read = true;             // end_read was called for the frame it holds
    };
    Slot& add_slot();
    // Waits (across threads) until frames first .. first + count - 1 are written; their
    // texture objects into `objects`, in frame order; the latest of their timeline values.
    uint64_t written_frames(uint64_t first, uint32_t count, cudaTextureObject_t* objects);
    Slot& holding(uint64_t frame);  // with mutex_ held
    const Slot& holding(uint64_t frame) const;
    // Waits (mutex_ held by `lock`) until `done()`, where the other side runs on another
    // thread than this one; false: it would wait for this thread itself, or it timed out.
    template <class Done>
    bool wait_for_other(std::unique_lock<std::mutex>& lock, const std::optional<std::thread::id>& other, Done done);
    CudaLink& link_;
    TextureDesc desc_;
    CudaSamplerDesc sampler_;
    uint32_t max_slots_;
    std::deque<Slot> slots_;                              // a deque: growing keeps references to slots valid
    std::deque<Slot*> by_write_;                          // every slot, least recently written first
    std::optional<uint64_t> last_written_;                // the last frame end_write was called for
    std::optional<std::thread::id> producer_, consumer_;  // the threads of each side's last call
    mutable std::mutex mutex_;                            // the slots' state, between the two sides' threads
    std::condition_variable changed_;
};

}  // namespace tvlm
