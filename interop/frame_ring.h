#pragma once
// A ring of imported textures for video: Vulkan writes frame f into slot f % slots while
// CUDA reads earlier frames. All ordering is on the GPU through the CudaLink's timelines:
// CUDA waits until frame f is ready; Vulkan's first submission for frame f waits until
// CUDA released frame f - slots. No host waits.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "cuda_link.h"
#include "imported_texture.h"

namespace tvlm {

class FrameRing {
public:
    FrameRing(CudaLink& link, const TextureDesc& desc, uint32_t slots, const CudaSamplerDesc& sampler = {});

    // Vulkan side of frame f: the texture to write. The next Vulkan submission (the upload)
    // waits until CUDA released the frame that used the slot before.
    Texture& begin_write(uint64_t frame);
    // After the frame's upload and mips: `ready` is the timeline value that completes them.
    void end_write(uint64_t frame, uint64_t ready);
    // CUDA side: later work in `stream` waits for the frame; its texture object.
    cudaTextureObject_t begin_read(uint64_t frame, cudaStream_t stream);
    // After the kernels that read the frame: its slot may be rewritten.
    void end_read(uint64_t frame, cudaStream_t stream);

    // Frame f's slot (for its CUDA view: size, layers, array).
    const ImportedTexture& texture(uint64_t frame) const { return slots_[frame % slots_.size()].texture; }
    uint32_t slots() const { return static_cast<uint32_t>(slots_.size()); }

private:
    struct Slot {
        ImportedTexture texture;
        uint64_t ready = 0;     // Vulkan timeline value at which the slot's frame is complete
        uint64_t released = 0;  // CUDA "released" value after the slot's last read
    };
    Slot& slot(uint64_t frame) { return slots_[frame % slots_.size()]; }
    CudaLink& link_;
    std::vector<Slot> slots_;
};

}  // namespace tvlm
