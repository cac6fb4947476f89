#pragma once
// A CUDA texture that follows a video whose frames arrive in CUDA memory (NVDEC through
// VideoDecoder, or a decoder of the caller's): the CUDA twin of VideoTexture, decided on
// the GPU. Each frame (RGBA8, written to frame()) is compared with level 0 tile by tile
// (the rule of engine/video/changed_tiles.h), and the same kernel copies only the changed
// tiles into level 0 (update_changed_tiles); only the mip texels that depend on them are
// recomputed (CudaBoxMips::update_changed). No host sync: stream-ordered steps whose
// cost follows what changed, captured once as a CUDA graph and relaunched per frame. With threshold 0 the texture equals a full copy and
// regeneration of every frame. What changed is read back on the side, for reports.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/video/changed_tiles.h"
#include "cuda_pipelines/cuda_array_texture.h"
#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/cuda_handle.h"
#include "cuda/device_buffer.h"

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
    // Enqueues the frame's update on `stream` (the frame's writes must be ordered before
    // it); returns without waiting. The first frame is copied and its chain built whole.
    void update(cudaStream_t stream);
    // What the last update() changed (the host waits for that update's flags): the changed
    // tiles, merged rectangles covering them (ChangeDetection::max_regions) and the fraction
    // of texels they cover; a first frame is whole, and so is a scene cut (more than
    // ChangeDetection::whole_frame_above of the tiles changed), whose regions are still the
    // tiles the GPU updated. Throws Error before the first update.
    FrameChanges changes() const;

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
    PinnedMemory changed_host_;  // the flags of the last update, copied after it
    CudaEvent flags_copied_;
    CudaGraphExec update_graph_;  // captured at the second frame: everything but the first frame's copy
    uint64_t updates_ = 0;
};

}  // namespace tvlm
