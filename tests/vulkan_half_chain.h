#pragma once
// The float16 special-values box chain on a Vulkan context: special_half_image's subnormal,
// huge, negative, infinite, NaN, tied, cancelling and signed-zero texels, box mips by
// whichever shader the context picks, every level bit for bit against the reference.
#include <doctest/doctest.h>

#include "engine/core/context.h"
#include "engine/mips/generate_mips.h"
#include "tests/random_image.h"
#include "engine/textures/texture.h"
#include "tests/texture_compare.h"
#include "engine/textures/transfer.h"

namespace tvlm::test {

inline void check_special_half_chain(Context& context, uint32_t width, uint32_t height, uint32_t seed) {
    CAPTURE(width);
    const ImageF base = special_half_image(width, height, seed);
    Texture texture = Texture::create(context, TextureDesc::sampled_2d(width, height, Format::rgba16f));
    upload(context, texture, host_pixels(base));
    generate_mips(context, texture, MipFilter::box);
    check_half_box_chain(base, texture.levels(),
                         [&](uint32_t level) { return readback_image(context, texture, level); });
}

}  // namespace tvlm::test
