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

#ifdef __cplusplus
static_assert(sizeof(BoxDownsampleParams) == 24, "push constant layout must match GLSL");
}  // namespace tvlm::gpu
#endif

#endif
