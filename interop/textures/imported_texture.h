#pragma once
// A Vulkan texture, its CUDA import and a texture object: what the pool and the frame ring
// hand out. Members are destroyed in reverse order: object, CUDA import, Vulkan texture.
#include "interop/textures/cuda_texture.h"
#include "engine/textures/texture.h"

namespace tvlm {

struct ImportedTexture {
    Texture vulkan;
    CudaTexture cuda;
    TextureObject object;

    // Creates an exportable texture of `desc` and imports it (the current CUDA device).
    static ImportedTexture create(Context& context, TextureDesc desc, const CudaSamplerDesc& sampler = {});
};

}  // namespace tvlm
