#include "interop/textures/cuda_texture.h"

#include <string>

#include "engine/core/context.h"
#include "cuda/cuda_check.h"
#include "engine/error.h"

namespace tvlm {

namespace {

// CUDA must know how the graphics API uses the image, since that can decide its memory
// layout: surface writes (STORAGE) and rendering (COLOR_ATTACHMENT).
unsigned int array_flags(VkImageUsageFlags usage) {
    return ((usage & VK_IMAGE_USAGE_STORAGE_BIT) ? cudaArraySurfaceLoadStore : 0u) |
           ((usage & VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT) ? cudaArrayColorAttachment : 0u);
}

// The usage of every texture texturevlm creates (and of the images import_external maps).
constexpr VkImageUsageFlags kEngineUsage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;

}  // namespace

CudaTexture CudaTexture::import(const Texture& texture) {
    if (!texture.valid()) throw Error("cannot import a destroyed (or moved-from) texture into CUDA");
    if (!texture.desc().exportable)
        throw Error(
            "cannot import texture into CUDA: it was not created exportable (set TextureDesc::exportable; "
            "for an application's image, ApplicationImage::exportable_memory)");
    return import_checked(texture.desc(), texture.export_memory_fd(), texture.allocation_size(), texture.usage());
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
    return import_checked(desc, std::move(fd), size, kEngineUsage);
}

CudaTexture CudaTexture::import_checked(const TextureDesc& texture_desc, UniqueFd fd, size_t size,
                                        VkImageUsageFlags usage) {
    CudaTexture t;
    t.desc_ = texture_desc;
    t.desc_.exportable = true;
    t.memory_ = import_dedicated_memory(std::move(fd), size);
    cudaExternalMemoryMipmappedArrayDesc desc{};
    desc.offset = 0;
    desc.formatDesc = cuda_channel_format(t.desc_.format);
    desc.extent = cudaExtent{t.desc_.width, t.desc_.height, t.layered() ? t.desc_.layers : 0u};
    desc.flags = array_flags(usage) | (t.layered() ? cudaArrayLayered : 0u);
    desc.numLevels = t.desc_.mip_levels();
    t.array_ = map_mipmapped_array(t.memory_, desc);
    return t;
}

}  // namespace tvlm
