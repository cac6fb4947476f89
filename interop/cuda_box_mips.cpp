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

CudaBoxMips::CudaBoxMips(const CudaTexture& texture, CudaBoxKernels kernels) : desc_(texture.desc()), kernels_(kernels) {
    for (uint32_t level = 0; level < desc_.mip_levels(); ++level) surfaces_.push_back(texture.make_surface(level));
    if (kernels_ == CudaBoxKernels::fused && (desc_.format == Format::rgba8_unorm || desc_.format == Format::rgba16f)) {
        tail_counters_ = DeviceBuffer<uint32_t>(desc_.layers);
        tail_texels_ = DeviceBuffer<uint32_t>(size_t{desc_.layers} * TVLM_BOX_TAIL_EDGE * TVLM_BOX_TAIL_EDGE * 2);
        TVLM_CUDA_CHECK(cudaMemset(tail_counters_.data(), 0, tail_counters_.bytes()));
    }
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
        // A six-level packed pass followed by one small tile that halves all the way: the
        // last block of this launch finishes it, saving a launch.
        BoxTail tail;
        if (tail_counters_.data() && pass.levels == TVLM_BOX_MAX_LEVELS && src.width % 2 == 0 && src.height % 2 == 0 &&
            p + 1 < passes.size()) {
            const BoxPass& next = passes[p + 1];
            const Extent2D small = level_extent(desc_.width, desc_.height, next.src_level);
            // Only small tails: one texel of level a+6 per thread. A 64x64 tail took longer in
            // the last block than in a launch of its own (H200: 4096^2 43.4 us fused against
            // 40.1 us in two launches; 1024^2, a 16x16 tail: 8.5 against 9.9 us).
            if (next.tiles_x == 1 && next.tiles_y == 1 && small.width * small.height <= TVLM_BOX_THREADS &&
                small.width % 2 == 0 && small.height % 2 == 0) {
                tail.src = surfaces_[next.src_level].handle();
                for (uint32_t j = 0; j < next.levels; ++j) tail.dst[j] = surfaces_[next.src_level + 1 + j].handle();
                tail.width = small.width;
                tail.height = small.height;
                tail.levels = next.levels;
                tail.counter = tail_counters_.data();  // indexed by absolute layer in the kernel
                tail.texels = tail_texels_.data();
            }
        }
        launch_box_mips(l, tail.counter ? &tail : nullptr, stream);
        if (tail.counter) ++p;  // the next pass ran inside this launch
    }
}

}  // namespace tvlm
