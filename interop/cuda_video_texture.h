#pragma once
// A CUDA texture that follows a video whose frames arrive in CUDA memory (NVDEC through
// VideoDecoder, or a decoder of the caller's): the CUDA twin of VideoTexture. Each frame
// (RGBA8, written to frame()) is compared with level 0 tile by tile on the GPU
// (find_changed_tiles: the rule of engine/video/changed_tiles.h); only the changed
// rectangles are copied into level 0 and only their mips updated (CudaBoxMips::update); the
// first frame and scene cuts are replaced whole. With threshold 0 the texture equals a full
// copy and regeneration of every frame.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda_array_texture.h"
#include "cuda_box_mips.h"
#include "cuda_handle.h"
#include "device_buffer.h"
#include "video/changed_tiles.h"

namespace tvlm {

class CudaVideoTexture {
public:
    // An RGBA8 texture with its full box chain on the current CUDA device. Throws Error for
    // zero or oversize extents, or a bad ChangeDetection.
    CudaVideoTexture(uint32_t width, uint32_t height, ChangeDetection detection = {});
    CudaVideoTexture(const CudaVideoTexture&) = delete;
    CudaVideoTexture& operator=(const CudaVideoTexture&) = delete;

    // Where the next frame goes: RGBA8, rows frame_pitch() bytes apart, in CUDA memory.
    uint8_t* frame() const { return frame_.data(); }
    size_t frame_pitch() const { return size_t{grid_.width} * 4; }
    // Finds the changed tiles (one kernel on `stream`, then the host waits for their flags,
    // a few KB), and enqueues the copies and mip updates on `stream` without waiting. The
    // frame's writes must be ordered before `stream`'s work.
    FrameChanges update(cudaStream_t stream);

    CudaMipmaps mipmaps() const { return texture_.mipmaps(); }
    const TileGrid& grid() const { return grid_; }

private:
    ChangeDetection detection_;
    TileGrid grid_;
    CudaArrayTexture texture_;
    CudaBoxMips mips_;
    SurfaceObject level0_;
    DeviceBuffer<uint8_t> frame_;
    DeviceBuffer<uint32_t> changed_;
    PinnedMemory changed_host_;
    bool filled_ = false;
};

}  // namespace tvlm
