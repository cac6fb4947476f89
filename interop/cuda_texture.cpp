#include "cuda_texture.h"

#include <string>

#include "context.h"
#include "cuda_check.h"
#include "error.h"

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

CudaTexture CudaTexture::import(const Texture& texture) {
    if (!texture.valid()) throw Error("cannot import a destroyed (or moved-from) texture into CUDA");
    if (!texture.desc().exportable)
        throw Error("cannot import texture into CUDA: it was not created exportable (set TextureDesc::exportable)");
    return import_checked(texture.desc(), texture.export_memory_fd(), texture.allocation_size());
}

CudaTexture CudaTexture::import_external(Context& context, const TextureDesc& desc, UniqueFd fd, size_t size) {
    const VkDeviceSize required = Texture::required_memory(context, desc);
    if (size != required)
        throw Error("cannot import " + std::to_string(size) + " bytes as a " + std::to_string(desc.width) + "x" +
                    std::to_string(desc.height) + "x" + std::to_string(desc.layers) + " " +
                    std::string(format_info(desc.format).name) + " texture with " + std::to_string(desc.mip_levels()) +
                    " levels: its dedicated allocation has exactly " + std::to_string(required) +
                    " bytes on this device; pass the VkMemoryAllocateInfo::allocationSize the exporter used "
                    "and the image's exact extent, layers, levels and format");
    return import_checked(desc, std::move(fd), size);
}

CudaTexture CudaTexture::import_checked(const TextureDesc& texture_desc, UniqueFd fd, size_t size) {
    CudaTexture t;
    t.desc_ = texture_desc;
    t.desc_.exportable = true;
    t.memory_ = import_dedicated_memory(std::move(fd), size);
    cudaExternalMemoryMipmappedArrayDesc desc{};
    desc.offset = 0;
    desc.formatDesc = cuda_channel_format(t.desc_.format);
    desc.extent = cudaExtent{t.desc_.width, t.desc_.height, t.layered() ? t.desc_.layers : 0u};
    // The image has STORAGE usage: CUDA must know it as a surface-capable array.
    desc.flags = cudaArraySurfaceLoadStore | (t.layered() ? cudaArrayLayered : 0u);
    desc.numLevels = t.desc_.mip_levels();
    t.array_ = map_mipmapped_array(t.memory_, desc);
    return t;
}

TextureObject CudaTexture::make_texture_object(const CudaSamplerDesc& s) const {
    cudaResourceDesc resource{};
    resource.resType = cudaResourceTypeMipmappedArray;
    resource.res.mipmap.mipmap = array_.handle();
    cudaTextureDesc desc{};
    for (int i = 0; i < 3; ++i) desc.addressMode[i] = s.address;
    for (int i = 0; i < 4; ++i) desc.borderColor[i] = s.border[i];
    desc.filterMode = s.filter;
    desc.mipmapFilterMode = s.mip_filter;
    desc.readMode = format_info(desc_.format).component == ComponentType::u8 ? cudaReadModeNormalizedFloat
                                                                              : cudaReadModeElementType;
    desc.sRGB = format_info(desc_.format).srgb ? 1 : 0;
    desc.normalizedCoords = s.normalized_coords ? 1 : 0;
    desc.maxAnisotropy = s.max_anisotropy;
    desc.minMipmapLevelClamp = 0.0f;
    desc.maxMipmapLevelClamp = static_cast<float>(desc_.mip_levels() - 1);
    desc.disableTrilinearOptimization = s.disable_trilinear_optimization ? 1 : 0;
    cudaTextureObject_t object = 0;
    TVLM_CUDA_CHECK(cudaCreateTextureObject(&object, &resource, &desc, nullptr));
    return TextureObject(object);
}

SurfaceObject CudaTexture::make_surface(uint32_t level) const {
    if (level >= desc_.mip_levels())
        throw Error("no surface on level " + std::to_string(level) + ": the texture has " +
                    std::to_string(desc_.mip_levels()) + " levels");
    cudaArray_t level_array = nullptr;
    TVLM_CUDA_CHECK(cudaGetMipmappedArrayLevel(&level_array, array_.handle(), level));
    cudaResourceDesc resource{};
    resource.resType = cudaResourceTypeArray;
    resource.res.array.array = level_array;
    cudaSurfaceObject_t object = 0;
    TVLM_CUDA_CHECK(cudaCreateSurfaceObject(&object, &resource));
    return SurfaceObject(object);
}

}  // namespace tvlm
