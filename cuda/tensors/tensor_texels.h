#pragma once
// Copies between strided tensors (what DLPack hands over: any strides, uint8 / float16 /
// bfloat16 / float32, channels first or last) and one level of a CUDA mipmapped array,
// converting on the way, through surfaces: a tensor becomes level 0 of a texture with no
// staging copy, and levels become tensors again. Stream-ordered, no host sync.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/mips/box_mips.h"

namespace tvlm {

enum class TensorDtype : uint8_t { u8, f16, bf16, f32 };

// Bytes of one element, on the host and in kernels.
#ifdef __CUDACC__
__host__ __device__
#endif
    constexpr uint32_t
    element_bytes(TensorDtype dtype) {
    return dtype == TensorDtype::u8 ? 1 : dtype == TensorDtype::f32 ? 4 : 2;
}

// Element (b, c, y, x) of a tensor sits at data + b*stride_b + c*stride_c + y*stride_y +
// x*stride_x elements: [B, C, H, W] and [B, H, W, C] are only different strides.
struct TensorView {
    void* data = nullptr;
    TensorDtype dtype = TensorDtype::u8;
    int64_t stride_b = 0, stride_c = 0, stride_y = 0, stride_x = 0;
    uint32_t channels = 4;  // 3 or 4: a texture's alpha is 1 where the tensor has none
};

// Images of one shape, dtype and strides in separate allocations (a list of tensors), read
// as the layers of one launch: layer b is images[b] where a view would use data + b *
// stride_b. Kernels take it as a __grid_constant__ parameter, so a run-time index reads the
// parameter bank, no copy. count 0: the view's own batch.
constexpr uint32_t kMaxListedImages = 32;
struct ImageList {
    const void* images[kMaxListedImages] = {};
    uint32_t count = 0;
};

// Texels [x, x + width) x [y, y + height) of layers [first_layer, first_layer + layers);
// tensor element (b, c, y, x) is texel (x, y) of layer first_layer + b.
struct TexelBlock {
    uint32_t x = 0, y = 0, width = 0, height = 0;
    uint32_t first_layer = 0, layers = 1;
};

// Values convert as the engine's host conversion does (image.h): uint8 tensors are bytes,
// float tensors are values in [0, 1] for 8-bit textures (clamped, rounded half up) and
// stored as they are (float16: nearest even) in float textures; 8-bit texels read into
// float tensors as byte / 255.
// `sources` (count == block.layers) replaces the tensor's batch with a list of images.
void write_texels(const TensorView& tensor, cudaSurfaceObject_t level, bool layered, SurfaceTexel texel,
                  const TexelBlock& block, cudaStream_t stream, const ImageList& sources = {});
// Whether every row of every plane of `layers` images (the view's batch, or `sources`)
// starts on a `bytes` boundary with elements adjacent in x: what word-wide loads need.
bool rows_aligned(const TensorView& view, const ImageList& sources, uint32_t layers, uint32_t bytes);

// write_texels of a whole image that also stores its level 1 (the 2:1 box of engine/
// box_filter.h) into `next_level` from the same loads: a texture whose chain is two levels
// needs no mip pass. For uint8 RGB(A) tensors into RGBA8 textures, block at (0, 0) with even
// sides (writes_with_next_level); throws Error, launching nothing, otherwise.
bool writes_with_next_level(const TensorView& tensor, SurfaceTexel texel, const TexelBlock& block);
void write_texels_and_next_level(const TensorView& tensor, cudaSurfaceObject_t level, cudaSurfaceObject_t next_level,
                                 bool layered, SurfaceTexel texel, const TexelBlock& block, cudaStream_t stream,
                                 const ImageList& sources = {});
void read_texels(cudaSurfaceObject_t level, bool layered, SurfaceTexel texel, const TexelBlock& block,
                 const TensorView& tensor, cudaStream_t stream);

}  // namespace tvlm
