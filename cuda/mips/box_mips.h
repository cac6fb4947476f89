#pragma once
// The single-pass box downsampler in CUDA, for content that arrives in CUDA memory: the
// same passes, arithmetic and results as shaders/box_mips.comp (engine/mips/box_filter.h),
// reading and writing levels through surface objects.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "shaders/shader_params.h"

namespace tvlm {

// How a level's texels are stored, as CUDA surfaces see them.
enum class SurfaceTexel : uint8_t { uchar4, half4, float4, float1 };

// The pass after a launch's own, when it is one tile of the packed kernel and the launch
// rewrites its whole source with one texel per block: the last block of each layer to
// finish does it (box_packed_kernel), so the chain needs one launch less. Deferred: the
// blocks only leave their texel and count themselves in, and launch_box_deferred_tail(),
// later in the stream, halves the texels once all are in.
struct BoxMipsTail {
    cudaSurfaceObject_t dst[TVLM_BOX_MAX_LEVELS] = {};  // its levels
    uint32_t levels = 0;                                // 0: no tail
    void* scratch = nullptr;                            // a texel (8 bytes at most) per block and layer
    unsigned int* counters = nullptr;                   // one per layer, 0 between launches
    bool deferred = false;
};

struct BoxMipsLaunch {
    cudaSurfaceObject_t src = 0;                        // level a
    cudaSurfaceObject_t dst[TVLM_BOX_MAX_LEVELS] = {};  // levels a+1 .. a+levels
    gpu::BoxMipsParams params{};
    uint32_t tiles_x = 0, tiles_y = 0, layers = 1;
    bool layered = false;  // surfaces on a layered array
    SurfaceTexel texel = SurfaceTexel::uchar4;
    bool packed = true;  // RGBA8, sRGB8 and RGBA16F levels that halve: the packed-word kernels (false: per texel)
    bool overlap_launch = false;  // launch while the kernel before runs (programmatic dependent launch)
    bool after_pass = false;      // the kernel before it on the stream is a pass of its own chain
    BoxMipsTail tail{};           // packed kernel only
    // A first pass (level 0 -> ...) driven by changed tiles (cuda/video/video_frames.h): a block
    // whose level-0 source touches no changed tile of TVLM_CHANGE_TILE texels returns at
    // once; the others recompute their tile as always. One layer; no tail. Null: every block.
    const uint32_t* changed_tiles = nullptr;
    uint32_t changed_tiles_x = 0, changed_tiles_y = 0;
    // A whole first pass of the packed RGBA8 or RGBA16F kernel may read level 0 from a frame
    // in CUDA memory instead (layers one after another, rows frame_row_bytes apart; pointer
    // and rows 16-byte aligned) and write it into level 0 (`src`) on the way: the copy into
    // the texture and the pass in one launch. Null: level 0 is read through `src`.
    const void* frame = nullptr;
    size_t frame_row_bytes = 0;
};

void launch_box_mips(const BoxMipsLaunch& launch, cudaStream_t stream);

// The deferred tail of `launch` (its tail.deferred set; the same BoxMipsLaunch), one block
// per layer, launched early (programmatic dependent launch) after whatever came between:
// it waits for the launch's blocks by their count, not for the kernel before it, so it runs
// beside that kernel (the patches of a frame graph, which read only levels finer than the
// tail's).
// It still ends after that kernel, as stream order promises. Safe from deadlock because an
// early launch starts only once every block of the kernels before it has started.
void launch_box_deferred_tail(const BoxMipsLaunch& launch, cudaStream_t stream);

// The small end of a chain in one block per layer (box_tail_kernel): levels a+1 .. a+levels
// from level a, any ratio at every step, each level kept in shared memory for the next.
// Where sides are odd the pass plan needs a launch per level (each after the one before:
// microseconds each, many for a 1080-line frame's last levels); the tail is one.
// Level a+1 may have at most kBoxTailTexels texels.
inline constexpr uint32_t kBoxTailTexels = 4096;
inline constexpr uint32_t kBoxTailMaxLevels = 16;
struct BoxTailLaunch {
    cudaSurfaceObject_t src = 0;                      // level a
    cudaSurfaceObject_t dst[kBoxTailMaxLevels] = {};  // levels a+1 .. a+levels
    uint32_t src_width = 0, src_height = 0, levels = 0;
    uint32_t kind = 0;  // TVLM_BOX_*
    uint32_t first_layer = 0, layers = 1;
    bool layered = false;
    SurfaceTexel texel = SurfaceTexel::uchar4;
    bool overlap_launch = false;
};
void launch_box_tail(const BoxTailLaunch& launch, cudaStream_t stream);

// Whether the launch runs the packed kernel (the only one that takes a tail): packed words
// asked for, an RGBA8, sRGB8 or RGBA16F format, and a source that halves on both axes.
bool runs_packed(const BoxMipsLaunch& launch);

// How many blocks of the packed kernel of `kind` (TVLM_BOX_*) the current device runs at
// once; 0 for kinds without one.
uint32_t packed_blocks_at_once(uint32_t kind);

}  // namespace tvlm
