#include "interop/textures/imported_texture.h"

namespace tvlm {

ImportedTexture ImportedTexture::create(Context& context, TextureDesc desc, const CudaSamplerDesc& sampler) {
    desc.exportable = true;
    ImportedTexture t;
    t.vulkan = Texture::create(context, desc);
    t.cuda = CudaTexture::import(t.vulkan);
    t.object = t.cuda.make_texture_object(sampler);
    return t;
}

}  // namespace tvlm
