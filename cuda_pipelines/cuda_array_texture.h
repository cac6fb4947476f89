#pragma once
// A texture that only CUDA knows: a mipmapped array from cudaMallocMipmappedArray (surface
// load/store, layered for batches), no graphics API at all. What a CUDA-only user builds:
// level 0 copied in (copy_to_level0), levels by CudaBoxMips, the same sampling kernels.
// The reference point for "is the graphics API worth it". Move-only.
#include "cuda_pipelines/cuda_mipmaps.h"

namespace tvlm {

class CudaArrayTexture {
public:
    CudaArrayTexture() = default;
    // Allocates on the current CUDA device. Throws Error, allocating nothing, for zero or
    // oversize extents, too many layers or levels (the device's cudaDeviceProp limits) or
    // a desc asking for export (nothing to export: the memory is CUDA's own).
    static CudaArrayTexture create(const TextureDesc& desc);

    CudaMipmaps mipmaps() const { return {array_.get(), desc_}; }
    operator CudaMipmaps() const { return mipmaps(); }  // NOLINT: a texture is usable as its view
    const TextureDesc& desc() const { return desc_; }
    bool valid() const { return static_cast<bool>(array_); }

private:
    TextureDesc desc_;
    MipmappedArray array_;
};

}  // namespace tvlm
