#pragma once
// Imported textures by shape and format: a released texture is handed out again without
// re-importing (imports cost milliseconds; a pool makes them once).
#include <memory>
#include <vector>

#include "interop/textures/imported_texture.h"

namespace tvlm {

class TexturePool {
public:
    explicit TexturePool(Context& context, const CudaSamplerDesc& sampler = {})
        : context_(context), sampler_(sampler) {}

    // A free texture with the same size, layers, levels and format, or a new import. The
    // reference stays valid until release() (and the pool's end).
    ImportedTexture& acquire(const TextureDesc& desc);
    void release(const ImportedTexture& texture);

    size_t size() const { return entries_.size(); }  // imports made so far
    size_t in_use() const;

private:
    struct Entry {
        std::unique_ptr<ImportedTexture> texture;
        bool in_use = false;
    };
    Context& context_;
    CudaSamplerDesc sampler_;
    std::vector<Entry> entries_;
};

}  // namespace tvlm
