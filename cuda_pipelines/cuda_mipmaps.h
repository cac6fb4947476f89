#pragma once
// What every CUDA consumer (sampling kernels, box mips, pyramid copies) needs of a
// mipmapped texture, whoever owns its memory: a Vulkan import (CudaTexture), an OpenGL
// registration while mapped (CudaGlTexture) or CUDA itself (CudaArrayTexture). A
// non-owning view: the owner must outlive it and everything made from it.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/mips/box_mips.h"
#include "cuda/cuda_handle.h"
#include "engine/sampling/patch.h"
#include "engine/textures/texture_desc.h"

namespace tvlm {

// How CUDA filters the texture; defaults give reproducible trilinear filtering.
struct CudaSamplerDesc {
    cudaTextureFilterMode filter = cudaFilterModeLinear;      // within a level
    cudaTextureFilterMode mip_filter = cudaFilterModeLinear;  // between levels
    cudaTextureAddressMode address = cudaAddressModeClamp;    // clamp, wrap, mirror, border
    float border[4] = {0, 0, 0, 0};
    unsigned int max_anisotropy = 1;             // CUDA clamps to [1, 16]
    bool normalized_coords = true;               // required for mipmaps
    bool disable_trilinear_optimization = true;  // exact blends, reproducible

    static CudaSamplerDesc point() { return {cudaFilterModePoint, cudaFilterModePoint}; }
    static CudaSamplerDesc trilinear() { return {}; }
    // Trilinear with up to kMaxAnisotropy taps along the footprint: what gradient layouts
    // sample with, on every backend.
    static CudaSamplerDesc anisotropic() {
        CudaSamplerDesc desc;
        desc.max_anisotropy = kMaxAnisotropy;
        return desc;
    }
    bool operator==(const CudaSamplerDesc&) const = default;
};

struct CudaMipmaps {
    cudaMipmappedArray_t array = nullptr;
    TextureDesc desc;  // extent, layers, levels and format of `array`

    bool layered() const { return desc.layers > 1; }
    TextureObject make_texture_object(const CudaSamplerDesc& sampler = {}) const;
    // A surface on one level (all layers) for CUDA writes; the array must allow surface
    // load/store. Throws Error for a level the texture lacks.
    SurfaceObject make_surface(uint32_t level) const;
    // One level's array (for copies into level 0 or out of any level).
    cudaArray_t level(uint32_t level) const;
};

// The CUDA channel format of an engine format (no 3-channel arrays exist: RGBA).
cudaChannelFormatDesc cuda_channel_format(Format format);

// How CUDA surfaces see a level's texels of `format`.
SurfaceTexel surface_texel(Format format);

// Copies whole layers of level 0 from `texels` (the format's bytes, `row_bytes` apart,
// layers one after another) in `stream`: a frame in CUDA or host memory into the texture,
// by cudaMemcpy3D. For frames in CUDA memory CudaBoxMips::generate_from is faster (its
// kernels store whole sectors of the array, faster than cudaMemcpy3D).
// Throws Error, copying nothing, for a null pointer, rows shorter than the level's, or
// layers the texture lacks.
void copy_to_level0(const CudaMipmaps& texture, const void* texels, size_t row_bytes, uint32_t first_layer,
                    uint32_t layers, cudaStream_t stream);

}  // namespace tvlm
