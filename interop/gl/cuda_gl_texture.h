#pragma once
// An OpenGL texture seen by CUDA: registered once (cudaGraphicsGLRegisterImage), mapped
// for CUDA work and unmapped for GL work. Map and unmap are stream-ordered: GL work issued
// before map() completes before later CUDA work in the stream, CUDA work before unmap()
// completes before later GL work; no host waits. While mapped, GL must not touch the
// texture (CUDA's rule); users who keep it mapped across frames order the two by host
// waits instead (see tvlm bench handover). Ownership: the GlTexture and its EGL context
// must outlive this.
#include <cuda_runtime_api.h>

#include <vector>

#include "cuda_pipelines/cuda_mipmaps.h"
#include "interop/gl/gl_texture.h"

namespace tvlm {

enum class CudaGlAccess : uint8_t {
    read,        // sampling only (cudaGraphicsRegisterFlagsReadOnly)
    read_write,  // also surface writes, e.g. CudaBoxMips (cudaGraphicsRegisterFlagsSurfaceLoadStore)
};

class CudaGlTexture {
public:
    CudaGlTexture() = default;
    // Registers `texture` with the current CUDA device; the GL context must be current.
    // Throws Error for formats CUDA cannot register (sRGB) or a refusal by the driver.
    CudaGlTexture(const GlTexture& texture, CudaGlAccess access = CudaGlAccess::read);
    CudaGlTexture(CudaGlTexture&& other) noexcept;
    CudaGlTexture& operator=(CudaGlTexture&& other) noexcept;
    CudaGlTexture(const CudaGlTexture&) = delete;
    CudaGlTexture& operator=(const CudaGlTexture&) = delete;
    ~CudaGlTexture();  // unmaps if mapped, then unregisters

    // Maps in `stream`; the view is valid until unmap(). Throws Error when already mapped.
    CudaMipmaps map(cudaStream_t stream);
    // Throws Error when not mapped.
    void unmap(cudaStream_t stream);
    bool mapped() const { return mapped_; }
    const TextureDesc& desc() const { return desc_; }
    // A texture object on a mapped array. CUDA may hand out another array on each map, so
    // objects are made once per array and sampler seen and kept until this is destroyed:
    // no object creation per frame.
    cudaTextureObject_t texture_object(const CudaMipmaps& mapped, const CudaSamplerDesc& sampler = {});

private:
    struct MappedObject {
        cudaMipmappedArray_t array;
        CudaSamplerDesc sampler;
        TextureObject object;
    };
    void release();
    std::vector<MappedObject> objects_;  // destroyed (in release) before the resource
    cudaGraphicsResource_t resource_ = nullptr;
    cudaStream_t mapped_stream_ = nullptr;
    bool mapped_ = false;
    TextureDesc desc_;
};

}  // namespace tvlm
