#pragma once
// The box mip chain of a CUDA tensor into CUDA tensors, with no texture in between: what
// texturevlm.generate_mipmaps needs when the caller wants the levels as tensors, not a
// texture to sample. The passes are the texture path's (plan_box_passes), the kernels
// cuda/mips/tensor_mips.cu, so every level equals CudaBoxMips' on a texture of the same format.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <vector>

#include "cuda/tensors/tensor_texels.h"

namespace tvlm {

// Levels 1 .. levels.size() of the width x height images of `image` (a batch of `layers`)
// into `levels` (level l in levels[l - 1], each max(1, width >> l) x max(1, height >> l),
// same dtype and channels as the image, any strides). uint8 averages as rgba8 (rounded
// half up), float16 as rgba16f (nearest even), float32 as rgba32f. Stream-ordered. Throws
// Error, launching nothing, for bfloat16, mismatched dtypes or channels, null pointers,
// an empty image or more levels than the chain has.
// A level with no data is not stored as a tensor, when the caller only wants some: allowed
// for all but those tensor_mips_pass_sources() lists, and for the last where a texture
// takes it. `sources` (count == layers) reads the layers from a list of images with the
// image's strides. `texture`: levels also written into a texture's level surfaces as
// they are computed, so a texture's chain is filled in the same launches.
struct TextureLevels {
    std::span<const cudaSurfaceObject_t> surfaces;  // by chain level (from 1; 0: none)
    uint32_t first_layer = 0;                       // texture layer of image 0
    bool layered = false;
};
void generate_tensor_mips(const TensorView& image, uint32_t width, uint32_t height, uint32_t layers,
                          std::span<const TensorView> levels, cudaStream_t stream, const ImageList& sources = {},
                          const TextureLevels& texture = {});

// The levels (>= 1) of a chain of `levels` that a later pass reads: they need storage even
// when the caller does not want them.
std::vector<uint32_t> tensor_mips_pass_sources(uint32_t width, uint32_t height, uint32_t levels);

}  // namespace tvlm
