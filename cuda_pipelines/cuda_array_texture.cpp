#include "cuda_pipelines/cuda_array_texture.h"

#include <algorithm>

#include "cuda/cuda_check.h"
#include "engine/error.h"

namespace tvlm {

namespace {

TextureLimits cuda_limits(bool layered) {
    int device = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    TVLM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    // Levels are sampled as a texture and written as surfaces: both limits apply.
    if (layered)
        return {uint32_t(std::min(prop.maxTexture2DLayered[0], prop.maxSurface2DLayered[0])),
                uint32_t(std::min(prop.maxTexture2DLayered[2], prop.maxSurface2DLayered[2])),
                "cudaDeviceProp::maxTexture2DLayered/maxSurface2DLayered", "cudaDeviceProp::maxTexture2DLayered[2]",
                "CUDA device"};
    return {uint32_t(std::min(prop.maxTexture2DMipmap[0], prop.maxSurface2D[0])), 1,
            "cudaDeviceProp::maxTexture2DMipmap/maxSurface2D", "layers", "CUDA device"};
}

}  // namespace

CudaArrayTexture CudaArrayTexture::create(const TextureDesc& desc) {
    if (desc.exportable)
        throw Error("a CUDA-only texture has nothing to export: create a Vulkan texture (Texture::create) to share it");
    check_texture_desc(desc, cuda_limits(desc.layers > 1));
    CudaArrayTexture t;
    t.desc_ = desc;
    const cudaChannelFormatDesc format = cuda_channel_format(desc.format);
    const cudaExtent extent{desc.width, desc.height, desc.layers > 1 ? desc.layers : 0u};
    cudaMipmappedArray_t array = nullptr;
    TVLM_CUDA_CHECK(cudaMallocMipmappedArray(&array, &format, extent, desc.mip_levels(),
                                             cudaArraySurfaceLoadStore | (desc.layers > 1 ? cudaArrayLayered : 0u)));
    t.array_ = MipmappedArray(array);
    return t;
}

}  // namespace tvlm
