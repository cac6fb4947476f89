#include "cuda_pipelines/cuda_tensor_mips.h"

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "engine/mips/box_filter.h"
#include "engine/error.h"
#include "cuda/mips/tensor_mips.h"

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

std::vector<uint32_t> tensor_mips_pass_sources(uint32_t width, uint32_t height, uint32_t levels) {
    std::vector<uint32_t> read;
    for (const BoxPass& pass : plan_box_passes(width, height, levels, {0, 0, width, height}))
        if (pass.src_level > 0) read.push_back(pass.src_level);
    return read;
}

void generate_tensor_mips(const TensorView& image, uint32_t width, uint32_t height, uint32_t layers,
                          std::span<const TensorView> levels, cudaStream_t stream, const ImageList& sources,
                          const TextureLevels& texture) {
    const uint32_t kind = box_kind(image.dtype);
    if (width == 0 || height == 0 || layers == 0)
        throw Error("box mips of an empty image: width, height and layers must be positive");
    const uint32_t chain = std::bit_width(std::max(width, height));
    if (levels.size() + 1 > chain)
        throw Error("a " + std::to_string(width) + "x" + std::to_string(height) + " image has " +
                    std::to_string(chain) + " levels, not " + std::to_string(levels.size() + 1));
    if (sources.count ? sources.count != layers : !image.data)
        throw Error(sources.count ? "a list of images needs one image per layer"
                                  : "the image has no data (a null pointer)");
    for (const TensorView& level : levels) {
        if (level.data && (level.dtype != image.dtype || level.channels != image.channels))
            throw Error("level tensors need the image's dtype and channels");
    }
    if (levels.empty()) return;
    const auto surface_at = [&](size_t l) { return l < texture.surfaces.size() ? texture.surfaces[l] : 0; };
    if (surface_at(0)) throw Error("level 0 is the image: write it into the texture with write_texels");
    if (!levels.back().data && !surface_at(levels.size()))
        throw Error("the last level has neither a tensor nor a texture surface to go to");
    const auto level_at = [&](uint32_t l) { return l == 0 ? image : levels[l - 1]; };
    const std::vector<BoxPass> passes = plan_box_passes(width, height, static_cast<uint32_t>(levels.size() + 1),
                                                        {0, 0, width, height});
    for (const BoxPass& pass : passes) {
        if (pass.src_level > 0 && !level_at(pass.src_level).data)
            throw Error("level " + std::to_string(pass.src_level) +
                        " is read by a later pass but has no tensor: "
                        "only levels tensor_mips_pass_sources() does not list may be left out");
        TensorMipsPass p;
        p.src = level_at(pass.src_level);
        if (pass.src_level == 0) p.sources = sources;
        p.surfaces.first_layer = texture.first_layer;
        p.surfaces.layered = texture.layered;
        p.surfaces.opaque_alpha = image.channels == 3;
        for (uint32_t j = 1; j <= pass.levels; ++j) p.surfaces.level[j] = surface_at(pass.src_level + j);
        for (uint32_t j = 0; j < pass.levels; ++j) p.dst[j] = level_at(pass.src_level + 1 + j);
        p.params = {std::max(1u, width >> pass.src_level),
                    std::max(1u, height >> pass.src_level),
                    pass.levels,
                    kind,
                    pass.tile_x,
                    pass.tile_y,
                    0,
                    0};
        p.tiles_x = pass.tiles_x;
        p.tiles_y = pass.tiles_y;
        p.layers = layers;
        launch_tensor_mips(p, stream);
    }
}

}  // namespace tvlm
