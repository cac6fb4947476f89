#pragma once
// Move-only owner of an OpenGL texture with immutable storage: GL_TEXTURE_2D, or
// GL_TEXTURE_2D_ARRAY for several layers, in the engine's formats, levels from
// glGenerateMipmap. What an OpenGL interop user has; the same TextureDesc as Vulkan's.
#include <cstdint>

#include "interop/gl/egl_context.h"
#include "engine/textures/image.h"
#include "engine/textures/texture.h"

namespace tvlm {

class GlTexture {
public:
    // Throws Error, creating nothing, where check_texture_desc() does (with the GL limits)
    // or for a desc asking for export (GL textures go to CUDA by registration).
    static GlTexture create(const EglContext& context, const TextureDesc& desc);

    GlTexture() = default;
    GlTexture(GlTexture&& other) noexcept;
    GlTexture& operator=(GlTexture&& other) noexcept;
    GlTexture(const GlTexture&) = delete;
    GlTexture& operator=(const GlTexture&) = delete;
    ~GlTexture();

    // Level 0 of one layer from an image of the texture's size and channel count.
    void upload(const ImageF& image, uint32_t layer = 0);
    // Level 0 of `layers` layers from texels already in the format (tightly packed rows,
    // layers one after another): a video frame, no conversion.
    void upload_texels(const void* texels, uint32_t first_layer, uint32_t layers);
    // Levels 1.. of every layer (glGenerateTextureMipmap; the filter is the driver's).
    void generate_mips();
    // One level of one layer as stored (waits for the GL work before it).
    ImageF readback(uint32_t level, uint32_t layer = 0) const;

    GLuint name() const { return name_; }
    GLenum target() const { return desc_.layers > 1 ? GL_TEXTURE_2D_ARRAY : GL_TEXTURE_2D; }
    const TextureDesc& desc() const { return desc_; }
    uint32_t levels() const { return desc_.mip_levels(); }

private:
    void destroy();
    const GlApi* gl_ = nullptr;
    GLuint name_ = 0;
    TextureDesc desc_;
};

}  // namespace tvlm
