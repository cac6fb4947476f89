#pragma once
// The renderer's frames handed to CUDA: texturevlm's box chain and foveated patches run in
// a CUDA stream that waits on the GPU for the renderer's timeline (value b + 2f + 1: frame
// f is drawn) and signals it back (b + 2f + 2: CUDA is done with frame f), so the
// renderer's next frame waits for CUDA on the GPU too; b is the timeline's value when the
// CudaFrames was made. Nothing waits on the host.
//
// Two ways to reach CUDA:
//  - zero_copy: CUDA maps the renderer's own image (its memory allocated exportable);
//  - copy: the frame is copied inside the renderer's submission into an exportable
//    texturevlm texture, which CUDA maps; the renderer may draw the next frame while CUDA
//    still reads the copy.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "engine/core/context.h"
#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/cuda_handle.h"
#include "cuda_pipelines/cuda_patch_sampler.h"
#include "interop/textures/cuda_texture.h"
#include "cuda/device_buffer.h"
#include "interop/host_semaphore.h"
#include "engine/sampling/patch.h"
#include "examples/host_renderer/renderer.h"
#include "engine/textures/texture.h"

namespace example {

enum class Handover { zero_copy, copy };
const char* handover_name(Handover handover);

class CudaFrames {
public:
    // Throws tvlm::Error where the device has no CUDA twin or cannot export (zero_copy:
    // the renderer's image memory; both: its semaphore).
    CudaFrames(tvlm::Context& context, Renderer& renderer, tvlm::Texture& frame, const tvlm::PatchLayout& layout,
               Handover handover);

    // The renderer's submission of frame f: what it waits for before touching what CUDA
    // reads (the frame image, or the copy) and what it signals when the frame is ready.
    TimelineStep wait_before(uint64_t f) const;
    TimelineStep signal_after(uint64_t f) const { return {base_ + 2 * f + 1}; }
    // Recorded after the draw: the hand-over (a layout transition, or the copy).
    void record(VkCommandBuffer cmd);
    // Frame f's CUDA work, enqueued in the stream: wait, mips, patches, signal.
    void enqueue(uint64_t f);

    ~CudaFrames();  // waits for the stream: nothing is unmapped while CUDA reads it
    CudaFrames(const CudaFrames&) = delete;
    CudaFrames& operator=(const CudaFrames&) = delete;

    void synchronize() const;
    // The last frame's patches [N, 3, P, P] (waits for the stream).
    std::vector<float> patches() const;
    // The texture CUDA made mips in: the frame itself, or the copy.
    tvlm::Texture& texture() { return handover_ == Handover::copy ? copy_ : frame_; }

private:
    int device_;  // the CUDA twin of the renderer's device, made current first
    Handover handover_;
    uint64_t base_ = 0;  // the timeline's value before the first frame
    tvlm::Texture& frame_;
    tvlm::Texture copy_;  // copy: exportable, the frame's size and format
    tvlm::CudaTexture cuda_;
    tvlm::HostSemaphore timeline_;
    tvlm::CudaStream stream_;
    tvlm::CudaBoxMips mips_;
    tvlm::CudaPatchSampler sampler_;
    tvlm::TextureObject object_;
    tvlm::DeviceBuffer<float> output_;
};

}  // namespace example
