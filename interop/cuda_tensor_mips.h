#pragma once
// The box mip chain of a CUDA tensor into CUDA tensors, with no texture in between: what
// texturevlm.generate_mipmaps needs when the caller wants the levels as tensors, not a
// texture to sample. The passes are the texture path's (plan_box_passes), the kernels
// cuda/tensor_mips.cu, so every level equals CudaBoxMips' on a texture of the same format.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>

#include "tensor_texels.h"

namespace tvlm {

// Levels 1 .. levels.size() of the width x height images of `image` (a batch of `layers`)
// into `levels` (level l in levels[l - 1], each max(1, width >> l) x max(1, height >> l),
// same dtype and channels as the image, any strides). uint8 averages as rgba8 (rounded
// half up), float16 as rgba16f (nearest even), float32 as rgba32f. Stream-ordered. Throws
// Error, launching nothing, for bfloat16, mismatched dtypes or channels, null pointers,
// an empty image or more levels than the chain has.
void generate_tensor_mips(const TensorView& image, uint32_t width, uint32_t height, uint32_t layers,
                          std::span<const TensorView> levels, cudaStream_t stream);

}  // namespace tvlm
