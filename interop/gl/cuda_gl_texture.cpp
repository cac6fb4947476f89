#include "interop/gl/cuda_gl_texture.h"

#include <utility>

// gl_texture.h brought in GL's core types; cuda_gl_interop.h wants GL/gl.h as well.
#include <cuda_gl_interop.h>

#include "cuda/cuda_check.h"
#include "engine/error.h"

namespace tvlm {

CudaGlTexture::CudaGlTexture(const GlTexture& texture, CudaGlAccess access) : desc_(texture.desc()) {
    if (format_info(desc_.format).srgb)
        throw Error(
            "CUDA cannot register sRGB GL textures (cudaGraphicsGLRegisterImage takes R/RG/RGBA 8/16/16F/32F "
            "formats): use rgba8 and decode in the kernel, or the Vulkan path");
    if (texture.name() == 0) throw Error("cannot register a destroyed (or moved-from) GL texture with CUDA");
    const unsigned flags = access == CudaGlAccess::read ? cudaGraphicsRegisterFlagsReadOnly
                                                        : cudaGraphicsRegisterFlagsSurfaceLoadStore;
    TVLM_CUDA_CHECK(cudaGraphicsGLRegisterImage(&resource_, texture.name(), texture.target(), flags));
}

CudaGlTexture::CudaGlTexture(CudaGlTexture&& o) noexcept
    : objects_(std::move(o.objects_)),
      resource_(std::exchange(o.resource_, nullptr)),
      mapped_stream_(o.mapped_stream_),
      mapped_(std::exchange(o.mapped_, false)),
      desc_(o.desc_) {}

CudaGlTexture& CudaGlTexture::operator=(CudaGlTexture&& o) noexcept {
    if (this != &o) {
        release();
        objects_ = std::move(o.objects_);
        resource_ = std::exchange(o.resource_, nullptr);
        mapped_stream_ = o.mapped_stream_;
        mapped_ = std::exchange(o.mapped_, false);
        desc_ = o.desc_;
    }
    return *this;
}

CudaGlTexture::~CudaGlTexture() { release(); }

void CudaGlTexture::release() {
    objects_.clear();
    if (!resource_) return;
    // Errors at teardown have no one to go to.
    if (mapped_) cudaGraphicsUnmapResources(1, &resource_, mapped_stream_);
    cudaGraphicsUnregisterResource(resource_);
    resource_ = nullptr;
    mapped_ = false;
}

CudaMipmaps CudaGlTexture::map(cudaStream_t stream) {
    if (!resource_) throw Error("map() on an unregistered (or moved-from) CudaGlTexture");
    if (mapped_) throw Error("the GL texture is already mapped for CUDA: unmap() it first");
    TVLM_CUDA_CHECK(cudaGraphicsMapResources(1, &resource_, stream));
    mapped_ = true;
    mapped_stream_ = stream;
    cudaMipmappedArray_t array = nullptr;
    TVLM_CUDA_CHECK(cudaGraphicsResourceGetMappedMipmappedArray(&array, resource_));
    return {array, desc_};
}

cudaTextureObject_t CudaGlTexture::texture_object(const CudaMipmaps& mapped, const CudaSamplerDesc& sampler) {
    if (!mapped_) throw Error("texture_object() of a GL texture that is not mapped for CUDA: map() it first");
    for (const MappedObject& o : objects_)
        if (o.array == mapped.array && o.sampler == sampler) return o.object.get();
    objects_.push_back({mapped.array, sampler, mapped.make_texture_object(sampler)});
    return objects_.back().object.get();
}

void CudaGlTexture::unmap(cudaStream_t stream) {
    if (!mapped_) throw Error("unmap() of a GL texture that is not mapped for CUDA");
    mapped_ = false;
    TVLM_CUDA_CHECK(cudaGraphicsUnmapResources(1, &resource_, stream));
}

}  // namespace tvlm
