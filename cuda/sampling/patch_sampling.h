#pragma once
// Patch sampling kernels, one launch for a whole batch, one thread per sample, writing
// [B, N, C, P, P] (engine/sampling/patch.h has the placement rule). Two filters, same interface:
//  - the texture unit: tex2DLod / tex2DLayeredLod at the patch level, or tex2DGrad /
//    tex2DLayeredGrad with the footprint's gradients (anisotropic);
//  - software: bilinear/trilinear from a mip pyramid in global memory (what the texture
//    unit buys is the difference), gradients per engine/sampling/patch.h's reference rule.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "shaders/point_samples.h"
#include "shaders/shader_params.h"

namespace tvlm {

struct PatchLaunch {
    const gpu::PatchGpu* patches = nullptr;  // device memory
    uint32_t patch_count = 0;                // over the whole batch
    uint32_t patch_size = 16;
    uint32_t channels = 4;  // C written: 3 or 4
    bool gradients = false;
    bool half = false;            // __half output instead of float
    float width = 0, height = 0;  // level-0 texels
    void* out = nullptr;          // device memory, patch_count * C * P * P values
    // No kernel on the stream writes `patches` (the host uploaded them once): the texture
    // kernel then reads them, and places its samples, before it waits for the kernel it was
    // launched behind, and only its texture reads wait.
    bool patches_ready = false;
};

// `texture_channels` is what the texture stores: 4, or 1 (read as (r, 0, 0, 1)).
void sample_patches_texture(cudaTextureObject_t texture, bool layered, uint32_t texture_channels,
                            const PatchLaunch& launch, cudaStream_t stream);

inline constexpr int kMaxPyramidLevels = 16;
// Levels in global memory, each [layers][height][width] texels, tightly packed.
struct SoftwarePyramid {
    const void* levels[kMaxPyramidLevels] = {};
    int width[kMaxPyramidLevels] = {}, height[kMaxPyramidLevels] = {};
    int level_count = 0;
    bool rgba8 = true;             // uchar4 texels (UNORM), else float4
    uint32_t max_anisotropy = 16;  // taps along the major gradient, as the reference
};
void sample_patches_software(const SoftwarePyramid& pyramid, const PatchLaunch& launch, cudaStream_t stream);

// The benchmark's point samples (texture_reads.h sample_points) filtered in software from
// layer 0 of the pyramid: a float4 per sample into `out` (device memory).
void sample_points_software(const SoftwarePyramid& pyramid, const gpu::PointSampleParams& points, float4* out,
                            cudaStream_t stream);

}  // namespace tvlm
