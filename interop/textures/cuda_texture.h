#pragma once
// A Vulkan texture seen by CUDA, zero copy: its memory imported once, mapped as a
// mipmapped array with every level (layered for array textures), and texture / surface
// objects on it. Ownership: texture and surface objects -> CudaTexture (array, then
// external memory) -> the Vulkan Texture, which must outlive everything made from it.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda_pipelines/cuda_mipmaps.h"
#include "interop/textures/external_memory.h"
#include "engine/textures/texture.h"

namespace tvlm {

class CudaTexture {
public:
    CudaTexture() = default;
    // Imports an exportable texture into the current CUDA device (select_cuda_device()):
    // one texturevlm created, or an application's image wrapped with its exportable memory
    // (ApplicationImage::exportable_memory), zero-copy either way. CUDA writes (box mips,
    // surfaces) need the image's STORAGE usage. Throws Error for textures that are
    // destroyed, not exportable, or refused by CUDA.
    static CudaTexture import(const Texture& texture);
    // Imports memory exported by another Vulkan user (a renderer's own image), described by
    // `desc`, with the allocation size the exporter used. CUDA does not check the size, so
    // this does: it must equal what an image of `desc` needs on `context`'s device. Takes
    // ownership of the fd on success.
    static CudaTexture import_external(Context& context, const TextureDesc& desc, UniqueFd fd, size_t size);

    // The view the sampling kernels and box mips take; a CudaTexture converts to it.
    CudaMipmaps mipmaps() const { return {array_.get(), desc_}; }
    operator CudaMipmaps() const { return mipmaps(); }  // NOLINT: a texture is usable as its view
    TextureObject make_texture_object(const CudaSamplerDesc& sampler = {}) const {
        return mipmaps().make_texture_object(sampler);
    }
    // A surface on one level (all layers) for CUDA writes.
    SurfaceObject make_surface(uint32_t level) const { return mipmaps().make_surface(level); }

    cudaMipmappedArray_t array() const { return array_.get(); }
    const TextureDesc& desc() const { return desc_; }
    bool layered() const { return desc_.layers > 1; }
    bool valid() const { return array_.get() != nullptr; }

private:
    static CudaTexture import_checked(const TextureDesc& desc, UniqueFd fd, size_t size, VkImageUsageFlags usage);
    TextureDesc desc_;
    ExternalMemory memory_;  // declared first: destroyed last
    MipmappedArray array_;
};

}  // namespace tvlm
