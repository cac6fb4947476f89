#include "interop/textures/texture_pool.h"

#include <cassert>

namespace tvlm {

namespace {
bool same_shape(const TextureDesc& a, const TextureDesc& b) {
    return a.width == b.width && a.height == b.height && a.layers == b.layers && a.mip_levels() == b.mip_levels() &&
           a.format == b.format;
}
}  // namespace

ImportedTexture& TexturePool::acquire(const TextureDesc& desc) {
    for (Entry& e : entries_)
        if (!e.in_use && same_shape(e.texture->vulkan.desc(), desc)) {
            e.in_use = true;
            return *e.texture;
        }
    entries_.push_back({std::make_unique<ImportedTexture>(ImportedTexture::create(context_, desc, sampler_)), true});
    return *entries_.back().texture;
}

void TexturePool::release(const ImportedTexture& texture) {
    for (Entry& e : entries_)
        if (e.texture.get() == &texture) {
            assert(e.in_use && "released twice");
            e.in_use = false;
            return;
        }
    assert(false && "texture does not belong to this pool");
}

size_t TexturePool::in_use() const {
    size_t n = 0;
    for (const Entry& e : entries_) n += e.in_use;
    return n;
}

}  // namespace tvlm
