#pragma once
// The single-pass box downsampler in CUDA, for content that arrives in CUDA memory: the
// same passes, arithmetic and results as shaders/box_mips.comp (engine/box_filter.h),
// reading and writing levels through surface objects.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "shader_params.h"

namespace tvlm {

// How a level's texels are stored, as CUDA surfaces see them.
enum class SurfaceTexel : uint8_t { uchar4, half4, float4, float1 };

struct BoxMipsLaunch {
    cudaSurfaceObject_t src = 0;                        // level a
    cudaSurfaceObject_t dst[TVLM_BOX_MAX_LEVELS] = {};  // levels a+1 .. a+levels
    gpu::BoxMipsParams params{};
    uint32_t tiles_x = 0, tiles_y = 0, layers = 1;
    bool layered = false;                               // surfaces on a layered array
    SurfaceTexel texel = SurfaceTexel::uchar4;
    bool packed = true;  // RGBA8 and RGBA16F levels that halve: the packed-word kernel (false: per texel)
};

// The small levels after a six-level packed pass (RGBA8, RGBA16F), finished inside the same launch by the
// block that completes last (as AMD's single-pass downsampler does), instead of a second
// launch of one block: each block publishes its 1x1 result in `texels` (global memory, so
// the last block reads it coherently); `counter` (one word per layer, zero between
// launches) finds the last block, which resets it.
struct BoxTail {
    cudaSurfaceObject_t src = 0;                        // level a+6, for texels outside the dispatch
    cudaSurfaceObject_t dst[TVLM_BOX_MAX_LEVELS] = {};  // levels a+7 ..
    uint32_t width = 0, height = 0;                     // level a+6: at most TVLM_BOX_TAIL_EDGE each
    uint32_t levels = 0;                                // levels written, all 2:1
    uint32_t* counter = nullptr;                        // [layers]
    uint32_t* texels = nullptr;                         // [layers][TVLM_BOX_TAIL_EDGE^2] texels (8 bytes each)
};
#define TVLM_BOX_TAIL_EDGE 64u

// `tail`: null, or the tail to fuse into a packed pass of six levels.
void launch_box_mips(const BoxMipsLaunch& launch, const BoxTail* tail, cudaStream_t stream);

}  // namespace tvlm
