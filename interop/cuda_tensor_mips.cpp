#include "cuda_tensor_mips.h"

#include <algorithm>
#include <bit>
#include <string>

#include "box_filter.h"
#include "error.h"
#include "tensor_mips.h"

namespace tvlm {

namespace {

uint32_t box_kind(TensorDtype dtype) {
    switch (dtype) {
        case TensorDtype::u8: return TVLM_BOX_UNORM8;
        case TensorDtype::f16: return TVLM_BOX_FLOAT16;
        case TensorDtype::f32: return TVLM_BOX_FLOAT32;
        case TensorDtype::bf16: break;
    }
    throw Error("bfloat16 has no box format of its own: build bfloat16 chains through a float32 texture");
}

}  // namespace

void generate_tensor_mips(const TensorView& image, uint32_t width, uint32_t height, uint32_t layers,
                          std::span<const TensorView> levels, cudaStream_t stream) {
    const uint32_t kind = box_kind(image.dtype);
    if (width == 0 || height == 0 || layers == 0) throw Error("box mips of an empty image: width, height and layers must be positive");
    const uint32_t chain = std::bit_width(std::max(width, height));
    if (levels.size() + 1 > chain)
        throw Error("a " + std::to_string(width) + "x" + std::to_string(height) + " image has " + std::to_string(chain) +
                    " levels, not " + std::to_string(levels.size() + 1));
    if (!image.data) throw Error("the image has no data (a null pointer)");
    for (const TensorView& level : levels) {
        if (!level.data) throw Error("a level tensor has no data (a null pointer)");
        if (level.dtype != image.dtype || level.channels != image.channels)
            throw Error("level tensors need the image's dtype and channels");
    }
    if (levels.empty()) return;
    const auto level_at = [&](uint32_t l) { return l == 0 ? image : levels[l - 1]; };
    for (const BoxPass& pass : plan_box_passes(width, height, static_cast<uint32_t>(levels.size() + 1),
                                               {0, 0, width, height})) {
        TensorMipsPass p;
        p.src = level_at(pass.src_level);
        for (uint32_t j = 0; j < pass.levels; ++j) p.dst[j] = level_at(pass.src_level + 1 + j);
        p.params = {std::max(1u, width >> pass.src_level), std::max(1u, height >> pass.src_level), pass.levels, kind,
                    pass.tile_x, pass.tile_y, 0, 0};
        p.tiles_x = pass.tiles_x;
        p.tiles_y = pass.tiles_y;
        p.layers = layers;
        launch_tensor_mips(p, stream);
    }
}

}  // namespace tvlm
