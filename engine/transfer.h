#pragma once
// Host <-> texture copies through staging buffers.
#include <cstdint>
#include <vector>

#include "image.h"

namespace tvlm {

class Context;
class Texture;

struct TexelRegion {
    uint32_t layer = 0, level = 0;
    uint32_t x = 0, y = 0;  // top-left texel of the rectangle written
};

// Copies `pixels` (any component type, 1/3/4 channels; converted to the texture's format)
// into a rectangle of one level of one layer. Texels outside the rectangle keep their
// content; mips are not regenerated. Returns the timeline value after which the copy is
// complete; does not wait. Throws Error, changing nothing, if the rectangle does not fit.
uint64_t upload(Context& context, Texture& texture, const HostPixels& pixels, TexelRegion region = {});

// Reads one level of one layer as the format's bytes (waits on the host: for tools and
// tests). Throws Error if the level or layer does not exist.
std::vector<uint8_t> readback(Context& context, Texture& texture, uint32_t level = 0, uint32_t layer = 0);
ImageF readback_image(Context& context, Texture& texture, uint32_t level = 0, uint32_t layer = 0);

}  // namespace tvlm
