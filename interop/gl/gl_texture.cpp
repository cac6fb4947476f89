#include "interop/gl/gl_texture.h"

#include <string>
#include <utility>
#include <vector>

#include "engine/error.h"

namespace tvlm {

namespace {

struct GlFormat {
    GLenum internal, pixel, type;
};

GlFormat gl_format(Format format) {
    switch (format) {
        case Format::rgba8_unorm: return {GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE};
        case Format::rgba8_srgb: return {GL_SRGB8_ALPHA8, GL_RGBA, GL_UNSIGNED_BYTE};
        case Format::rgba16f: return {GL_RGBA16F, GL_RGBA, GL_HALF_FLOAT};
        case Format::rgba32f: return {GL_RGBA32F, GL_RGBA, GL_FLOAT};
        case Format::r32f: return {GL_R32F, GL_RED, GL_FLOAT};
    }
    throw Error("unknown texture format");
}

}  // namespace

GlTexture GlTexture::create(const EglContext& context, const TextureDesc& desc) {
    check_texture_desc(
        desc, {static_cast<uint32_t>(context.max_texture_size()), static_cast<uint32_t>(context.max_array_layers()),
               "GL_MAX_TEXTURE_SIZE", "GL_MAX_ARRAY_TEXTURE_LAYERS", "GL driver"});
    if (desc.exportable)
        throw Error("GL textures are not exported as fds: CUDA registers them (cudaGraphicsGLRegisterImage)");

    GlTexture t;
    t.gl_ = &context.gl();
    t.desc_ = desc;
    const GlApi& gl = *t.gl_;
    const GlFormat f = gl_format(desc.format);
    gl.glCreateTextures(t.target(), 1, &t.name_);
    const auto levels = static_cast<GLsizei>(desc.mip_levels());
    const auto w = static_cast<GLsizei>(desc.width), h = static_cast<GLsizei>(desc.height);
    if (desc.layers > 1) gl.glTextureStorage3D(t.name_, levels, f.internal, w, h, static_cast<GLsizei>(desc.layers));
    else gl.glTextureStorage2D(t.name_, levels, f.internal, w, h);
    check_gl(gl, "glTextureStorage");  // t's destructor deletes the name on a throw
    return t;
}

GlTexture::GlTexture(GlTexture&& other) noexcept
    : gl_(other.gl_), name_(std::exchange(other.name_, 0u)), desc_(other.desc_) {}

GlTexture& GlTexture::operator=(GlTexture&& other) noexcept {
    if (this != &other) {
        destroy();
        gl_ = other.gl_;
        name_ = std::exchange(other.name_, 0u);
        desc_ = other.desc_;
    }
    return *this;
}

GlTexture::~GlTexture() { destroy(); }

void GlTexture::destroy() {
    if (name_) gl_->glDeleteTextures(1, &name_);
    name_ = 0;
}

void GlTexture::upload(const ImageF& image, uint32_t layer) {
    if (image.width != desc_.width || image.height != desc_.height ||
        image.channels != format_info(desc_.format).channels)
        throw Error("upload of a " + std::to_string(image.width) + "x" + std::to_string(image.height) + "x" +
                    std::to_string(image.channels) + " image into a " + std::to_string(desc_.width) + "x" +
                    std::to_string(desc_.height) + " texture of " + std::to_string(format_info(desc_.format).channels) +
                    " channels: sizes must match");
    if (layer >= desc_.layers)
        throw Error("layer " + std::to_string(layer) + " does not exist: the texture has " +
                    std::to_string(desc_.layers));
    upload_texels(encode_texels(image, desc_.format).data(), layer, 1);
}

void GlTexture::upload_texels(const void* texels, uint32_t first_layer, uint32_t layers) {
    if (!texels) throw Error("GL upload from a null pointer: pass the frame's texels");
    if (layers == 0 || uint64_t{first_layer} + layers > desc_.layers)
        throw Error("GL upload into layers " + std::to_string(first_layer) + ".." +
                    std::to_string(uint64_t{first_layer} + layers) + " of a texture with " +
                    std::to_string(desc_.layers) + " layers: pass at least one layer that exists");
    const GlFormat f = gl_format(desc_.format);
    gl_->glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    const auto w = static_cast<GLsizei>(desc_.width), h = static_cast<GLsizei>(desc_.height);
    if (desc_.layers > 1)
        gl_->glTextureSubImage3D(name_, 0, 0, 0, static_cast<GLint>(first_layer), w, h, static_cast<GLsizei>(layers),
                                 f.pixel, f.type, texels);
    else gl_->glTextureSubImage2D(name_, 0, 0, 0, w, h, f.pixel, f.type, texels);
    check_gl(*gl_, "glTextureSubImage (upload)");
}

void GlTexture::generate_mips() {
    gl_->glGenerateTextureMipmap(name_);
    check_gl(*gl_, "glGenerateTextureMipmap");
}

ImageF GlTexture::readback(uint32_t level, uint32_t layer) const {
    if (level >= levels() || layer >= desc_.layers)
        throw Error("level " + std::to_string(level) + " of layer " + std::to_string(layer) +
                    " does not exist: the texture has " + std::to_string(levels()) + " levels and " +
                    std::to_string(desc_.layers) + " layers");
    const Extent2D e = level_extent(desc_.width, desc_.height, level);
    const FormatInfo& info = format_info(desc_.format);
    std::vector<uint8_t> bytes(size_t{e.width} * e.height * info.texel_bytes());
    const GlFormat f = gl_format(desc_.format);
    gl_->glPixelStorei(GL_PACK_ALIGNMENT, 1);
    gl_->glGetTextureSubImage(name_, static_cast<GLint>(level), 0, 0, static_cast<GLint>(layer),
                              static_cast<GLsizei>(e.width), static_cast<GLsizei>(e.height), 1, f.pixel, f.type,
                              static_cast<GLsizei>(bytes.size()), bytes.data());
    check_gl(*gl_, "glGetTextureSubImage (readback)");
    return decode_texels(bytes, e.width, e.height, desc_.format);
}

}  // namespace tvlm
