// Parameter structs shared by GLSL (push constants), CUDA and C++: written once here.
// GLSL sees plain `uint`/`float`; C++ and CUDA get the same layout through the typedefs.
#ifndef TVLM_SHADER_PARAMS_H
#define TVLM_SHADER_PARAMS_H

#ifdef __cplusplus
#include <cstdint>
namespace tvlm::gpu {
using uint = uint32_t;
#endif

// Workgroup edge of the per-level box downsampler (8x8 texels, z = layer).
#define TVLM_BOX_GROUP_SIZE 8

struct BoxDownsampleParams {
    uint src_width;
    uint src_height;
    uint dst_width;
    uint dst_height;
    uint srgb;    // colour channels: decode happened in the sampled view; encode here
    uint unorm8;  // filter in byte units and round half up here (see reference_mips.h)
};

// Workgroup of the patch samplers: one invocation per output sample.
#define TVLM_SAMPLE_GROUP_SIZE 256

// One patch as every sampler reads it (std430: 32 bytes). Sample (j, k) of a P x P patch
// sits at the centre plus ((j+0.5)/P - 0.5) * su along the patch axis and
// ((k+0.5)/P - 0.5) * sv across it; the axis is a unit vector in pixel space, so (1, 0)
// gives u = cu + ((j+0.5)/P - 0.5) * su exactly (engine/patch.h has the whole rule).
struct PatchGpu {
    float cu;
    float cv;
    float su;      // footprint extent along the axis, in units of the level-0 width
    float sv;      // footprint extent across the axis, in units of the level-0 height
    float level;   // LOD for explicit-level sampling; < 0 marks a padding slot (zeros)
    float axis_x;  // unit direction of the patch's j axis in pixel space
    float axis_y;
    uint layer;    // array layer: the image of the batch
};

// Push constants of the Vulkan patch sampler (the CUDA kernels take the same numbers).
struct PatchSampleParams {
    uint patch_count;  // patches over the whole batch
    uint patch_size;   // P
    uint channels;     // C written per sample: 3 or 4
    uint gradients;    // 1: textureGrad from the footprint (anisotropic); 0: textureLod(level)
    float width;       // level-0 extent in texels (the pixel space of the axis)
    float height;
    uint pad0;
    uint pad1;
};

#ifdef __cplusplus
static_assert(sizeof(BoxDownsampleParams) == 24, "push constant layout must match GLSL");
static_assert(sizeof(PatchGpu) == 32, "std430 layout must match GLSL");
static_assert(sizeof(PatchSampleParams) == 32, "push constant layout must match GLSL");
}  // namespace tvlm::gpu
#endif

#endif
