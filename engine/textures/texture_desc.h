#pragma once
// What a texture is, whoever holds it (Vulkan, CUDA alone, OpenGL): extent, layers, levels
// and format. No graphics API: CUDA-only code describes its arrays with it too.
#include <cstdint>

#include "engine/mips/mip_filter.h"
#include "engine/textures/format.h"

namespace tvlm {

struct TextureDesc {
    uint32_t width = 0, height = 0;
    uint32_t layers = 1;  // array layers: one image of a batch each
    uint32_t levels = 0;  // 0 = the full chain down to 1x1
    Format format = Format::rgba8_unorm;
    bool exportable = false;  // dedicated memory exportable as an opaque fd (for CUDA)

    static TextureDesc sampled_2d(uint32_t w, uint32_t h, Format f, uint32_t levels = 0) {
        return {w, h, 1, levels, f, false};
    }
    static TextureDesc sampled_array(uint32_t w, uint32_t h, uint32_t layers, Format f, uint32_t levels = 0) {
        return {w, h, layers, levels, f, false};
    }
    uint32_t mip_levels() const { return levels ? levels : full_mip_count(width, height); }
};

// What a texture owner's API allows, named as the API names it (for the error messages).
struct TextureLimits {
    uint32_t max_dimension = 0, max_layers = 0;
    const char* dimension_name = "";  // e.g. maxImageDimension2D, GL_MAX_TEXTURE_SIZE
    const char* layers_name = "";
    const char* owner = "";  // e.g. "Vulkan device", "GL driver"
};

// The checks every texture owner (Vulkan, OpenGL) makes before creating anything: extents
// and layers at least 1 and within `limits`, levels within the full chain. Throws Error.
void check_texture_desc(const TextureDesc& desc, const TextureLimits& limits);

}  // namespace tvlm
