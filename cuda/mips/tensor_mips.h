#pragma once
// The box mip chain of a strided tensor written straight into strided tensors, for tensors
// whose dtype is their texture format's own (uint8 = rgba8, float16 = rgba16f, float32 =
// rgba32f): the same passes and arithmetic as the surface kernels (box_arithmetic.cuh), so
// the levels are bit-identical to CudaBoxMips', without copying the image into a CUDA
// array and every level out of it again. One block per 32x32 tile of level a+1 and plane
// (image b, channel c); stream-ordered, no host sync.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "shaders/shader_params.h"
#include "cuda/tensors/tensor_texels.h"

namespace tvlm {

// Texture level surfaces a pass also writes (rgba8 for uint8, rgba16f for float16, rgba32f
// for float32 tensors), one channel of a texel per store (surfaces are byte-addressed in
// x): level[step] receives level a+step (level[0] unused). 0: none. So one launch fills a
// texture's levels from a tensor's chain, with no tensor in between. (Level 0 itself is
// not copied this way: four byte-wide surface stores per texel made a 1024^2 copy 3x
// slower than write_texels.)
struct TensorMipsSurfaces {
    cudaSurfaceObject_t level[TVLM_BOX_MAX_LEVELS + 1] = {};
    uint32_t first_layer = 0;
    bool layered = false;
    bool opaque_alpha = false;  // 3-channel tensors: channel 2's blocks write alpha = 1 too
};

// One pass: level a (params.src_width x src_height) into levels a+1 .. a+params.levels.
// Every view has the source's dtype and channels; element (b, c, y, x) as in TensorView.
// A dst view with no data is not stored as a tensor (a level only the next one needs);
// `sources` replaces the source's batch with a list of images (count == layers).
struct TensorMipsPass {
    TensorView src;
    ImageList sources;
    TensorView dst[TVLM_BOX_MAX_LEVELS];
    TensorMipsSurfaces surfaces;
    gpu::BoxMipsParams params{};  // kind: TVLM_BOX_UNORM8, _FLOAT16 or _FLOAT32; first_layer unused
    uint32_t tiles_x = 0, tiles_y = 0, layers = 1;
};

// Throws Error, launching nothing, for a bfloat16 tensor or more than 65535 planes.
void launch_tensor_mips(const TensorMipsPass& pass, cudaStream_t stream);

}  // namespace tvlm
