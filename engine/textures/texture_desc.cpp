#include "engine/textures/texture_desc.h"

#include <string>

#include "engine/error.h"

namespace tvlm {

void check_texture_desc(const TextureDesc& d, const TextureLimits& limits) {
    const std::string size = std::to_string(d.width) + "x" + std::to_string(d.height);
    if (d.width == 0 || d.height == 0)
        throw Error("texture size " + size + " is empty: width and height must be at least 1");
    if (d.width > limits.max_dimension || d.height > limits.max_dimension)
        throw Error("texture size " + size + " exceeds " + limits.dimension_name + " " +
                    std::to_string(limits.max_dimension) + " (the limit of this " + limits.owner +
                    "): downscale the image first");
    if (d.layers == 0 || d.layers > limits.max_layers)
        throw Error("texture layer count " + std::to_string(d.layers) + " must be in 1.." +
                    std::to_string(limits.max_layers) + " (" + limits.layers_name + ")");
    if (d.levels > full_mip_count(d.width, d.height))
        throw Error("texture of " + size + " has at most " + std::to_string(full_mip_count(d.width, d.height)) +
                    " mip levels, not " + std::to_string(d.levels));
}

}  // namespace tvlm
