#include "cuda_box_mips.h"

#include "box_mips.h"
#include "generate_mips.h"

namespace tvlm {

namespace {

SurfaceTexel surface_texel(Format format) {
    switch (format_info(format).component) {
        case ComponentType::u8: return SurfaceTexel::uchar4;
        case ComponentType::f16: return SurfaceTexel::half4;
        case ComponentType::f32: break;
    }
    return format_info(format).channels == 1 ? SurfaceTexel::float1 : SurfaceTexel::float4;
}

}  // namespace

CudaBoxMips::CudaBoxMips(const CudaMipmaps& texture, CudaBoxKernels kernels) : desc_(texture.desc), kernels_(kernels) {
    for (uint32_t level = 0; level < desc_.mip_levels(); ++level) surfaces_.push_back(texture.make_surface(level));
}

void CudaBoxMips::generate(cudaStream_t stream) const {
    launch({0, 0, desc_.width, desc_.height}, 0, desc_.layers, stream);
}

void CudaBoxMips::update(const DirtyRegion& region, cudaStream_t stream) const {
    launch(checked_dirty_rect(region, desc_.width, desc_.height, desc_.layers), region.first_layer, region.layers,
           stream);
}

void CudaBoxMips::launch(TexelRect dirty, uint32_t first_layer, uint32_t layers, cudaStream_t stream) const {
    const std::vector<BoxPass> passes = plan_box_passes(desc_.width, desc_.height, desc_.mip_levels(), dirty);
    for (size_t p = 0; p < passes.size(); ++p) {
        const BoxPass& pass = passes[p];
        const Extent2D src = level_extent(desc_.width, desc_.height, pass.src_level);
        BoxMipsLaunch l;
        l.src = surfaces_[pass.src_level].handle();
        for (uint32_t j = 0; j < pass.levels; ++j) l.dst[j] = surfaces_[pass.src_level + 1 + j].handle();
        l.params = {src.width, src.height, pass.levels, box_kind(desc_.format), pass.tile_x, pass.tile_y, first_layer, 0};
        l.tiles_x = pass.tiles_x;
        l.tiles_y = pass.tiles_y;
        l.layers = layers;
        l.layered = desc_.layers > 1;
        l.texel = surface_texel(desc_.format);
        l.packed = kernels_ != CudaBoxKernels::per_texel;
        l.overlap_launch = p > 0;  // passes of one chain overlap; the chain waits for the work before it
        launch_box_mips(l, stream);
    }
}

}  // namespace tvlm
