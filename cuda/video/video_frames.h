#pragma once
// Video frames in CUDA memory: NVDEC's NV12 converted to RGBA8, and which tiles of a new
// RGBA8 frame differ from level 0 of a texture (the CUDA twin of shaders/frame_changes.comp,
// the same rule: engine/video/changed_tiles.h). Stream-ordered, no host sync.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "engine/yuv.h"

namespace tvlm {

// NV12 frames (Nv12Frame, yuv.h) are upsampled bilinearly.
// RGBA8 (alpha 255) into `rgba`, rows `rgba_pitch` bytes apart. Throws Error, launching
// nothing, for null pointers, zero extents or short pitches.
void nv12_to_rgba8(const Nv12Frame& frame, uint8_t* rgba, size_t rgba_pitch, cudaStream_t stream);

// For each tile of TVLM_CHANGE_TILE texels a side (one layer), 1 in `changed` where some
// channel of some texel of `frame` (RGBA8, rows `pitch` bytes apart) differs from level 0
// of the texture (`level0`, an RGBA8 surface) by more than `threshold`, else 0.
void find_changed_tiles(const uint8_t* frame, size_t pitch, cudaSurfaceObject_t level0, uint32_t width, uint32_t height,
                        uint32_t threshold, uint32_t* changed, cudaStream_t stream);

// find_changed_tiles, and each changed tile of `frame` written into level 0 by the same
// kernel (unchanged tiles are not touched). One launch, no host sync.
void update_changed_tiles(const uint8_t* frame, size_t pitch, cudaSurfaceObject_t level0, uint32_t width,
                          uint32_t height, uint32_t threshold, uint32_t* changed, cudaStream_t stream);

}  // namespace tvlm
