#include "cuda_pipelines/cuda_mipmaps.h"

#include <string>

#include "cuda/cuda_check.h"
#include "engine/error.h"

namespace tvlm {

cudaChannelFormatDesc cuda_channel_format(Format format) {
    switch (format) {
        case Format::rgba8_unorm:
        case Format::rgba8_srgb: return cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
        case Format::rgba16f: return cudaCreateChannelDesc(16, 16, 16, 16, cudaChannelFormatKindFloat);
        case Format::rgba32f: return cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindFloat);
        case Format::r32f: return cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    }
    return {};
}

SurfaceTexel surface_texel(Format format) {
    switch (format_info(format).component) {
        case ComponentType::u8: return SurfaceTexel::uchar4;
        case ComponentType::f16: return SurfaceTexel::half4;
        case ComponentType::f32: break;
    }
    return format_info(format).channels == 1 ? SurfaceTexel::float1 : SurfaceTexel::float4;
}

TextureObject CudaMipmaps::make_texture_object(const CudaSamplerDesc& s) const {
    cudaResourceDesc resource{};
    resource.resType = cudaResourceTypeMipmappedArray;
    resource.res.mipmap.mipmap = array;
    cudaTextureDesc texture{};
    for (int i = 0; i < 3; ++i) texture.addressMode[i] = s.address;
    for (int i = 0; i < 4; ++i) texture.borderColor[i] = s.border[i];
    texture.filterMode = s.filter;
    texture.mipmapFilterMode = s.mip_filter;
    texture.readMode = format_info(desc.format).component == ComponentType::u8 ? cudaReadModeNormalizedFloat
                                                                               : cudaReadModeElementType;
    texture.sRGB = format_info(desc.format).srgb ? 1 : 0;
    texture.normalizedCoords = s.normalized_coords ? 1 : 0;
    texture.maxAnisotropy = s.max_anisotropy;
    texture.minMipmapLevelClamp = 0.0f;
    texture.maxMipmapLevelClamp = static_cast<float>(desc.mip_levels() - 1);
    texture.disableTrilinearOptimization = s.disable_trilinear_optimization ? 1 : 0;
    cudaTextureObject_t object = 0;
    TVLM_CUDA_CHECK(cudaCreateTextureObject(&object, &resource, &texture, nullptr));
    return TextureObject(object);
}

cudaArray_t CudaMipmaps::level(uint32_t l) const {
    if (l >= desc.mip_levels())
        throw Error("level " + std::to_string(l) + " does not exist: the texture has " +
                    std::to_string(desc.mip_levels()) + " levels");
    cudaArray_t level_array = nullptr;
    TVLM_CUDA_CHECK(cudaGetMipmappedArrayLevel(&level_array, array, l));
    return level_array;
}

SurfaceObject CudaMipmaps::make_surface(uint32_t l) const {
    cudaResourceDesc resource{};
    resource.resType = cudaResourceTypeArray;
    resource.res.array.array = level(l);
    cudaSurfaceObject_t object = 0;
    TVLM_CUDA_CHECK(cudaCreateSurfaceObject(&object, &resource));
    return SurfaceObject(object);
}

void copy_to_level0(const CudaMipmaps& texture, const void* texels, size_t row_bytes, uint32_t first_layer,
                    uint32_t layers, cudaStream_t stream) {
    const TextureDesc& d = texture.desc;
    const size_t row = size_t{d.width} * format_info(d.format).texel_bytes();
    if (!texels) throw Error("copy into level 0 from a null pointer: pass the frame's texels");
    if (row_bytes < row)
        throw Error("copy into level 0 with rows of " + std::to_string(row_bytes) + " bytes: a row of the " +
                    std::to_string(d.width) + "-texel " + std::string(format_info(d.format).name) + " level has " +
                    std::to_string(row) + " bytes");
    if (layers == 0 || uint64_t{first_layer} + layers > d.layers)
        throw Error("copy into layers " + std::to_string(first_layer) + ".." +
                    std::to_string(uint64_t{first_layer} + layers) + " of a texture with " + std::to_string(d.layers) +
                    " layers: pass at least one layer that exists");
    cudaMemcpy3DParms p{};
    p.srcPtr = cudaPitchedPtr{const_cast<void*>(texels), row_bytes, d.width, d.height};
    p.dstArray = texture.level(0);
    p.dstPos = cudaPos{0, 0, first_layer};
    // A layered array is copied with layers as depth; a plain 2D array has depth 1.
    p.extent = cudaExtent{d.width, d.height, layers};
    p.kind = cudaMemcpyDefault;  // device or host memory, told apart by unified addressing
    TVLM_CUDA_CHECK(cudaMemcpy3DAsync(&p, stream));
}

}  // namespace tvlm
