#include "cuda_pipelines/cuda_box_mips.h"

#include <algorithm>
#include <string>

#include "cuda/mips/box_mips.h"
#include "cuda/cuda_check.h"
#include "engine/error.h"
#include "engine/mips/box_filter.h"
#include "cuda/tensors/level_copy.h"
#include "cuda/tensors/tensor_texels.h"

namespace tvlm {

namespace {

// The launch of one pass of the plan (tail, layers and overlap set by the caller).
BoxMipsLaunch pass_launch(const TextureDesc& desc, const std::vector<SurfaceObject>& surfaces, CudaBoxKernels kernels,
                          const BoxPass& pass, uint32_t first_layer) {
    const Extent2D src = level_extent(desc.width, desc.height, pass.src_level);
    BoxMipsLaunch l;
    l.src = surfaces[pass.src_level].get();
    for (uint32_t j = 0; j < pass.levels; ++j) l.dst[j] = surfaces[pass.src_level + 1 + j].get();
    l.params = {src.width, src.height, pass.levels, box_kind(desc.format), pass.tile_x, pass.tile_y, first_layer, 0};
    l.tiles_x = pass.tiles_x;
    l.tiles_y = pass.tiles_y;
    l.layered = desc.layers > 1;
    l.texel = surface_texel(desc.format);
    l.packed = kernels != CudaBoxKernels::per_texel;
    return l;
}

// `next` runs as the tail of `pass` (launches `l` and `next_l`) when both run the packed
// kernel, `pass` rewrites all of its last level with one texel per block (six levels over
// every tile), `next` is one tile reading that level, and all blocks of `pass` run at
// once. The ticket costs each block a fence and an atomic before it retires: with one
// wave of blocks that is paid once and saves a launch; with several waves it is paid per
// wave and costs more than the launch.
bool fuses(const TextureDesc& desc, uint32_t blocks_at_once, const BoxPass& pass, const BoxMipsLaunch& l,
           const BoxPass& next, const BoxMipsLaunch& next_l, uint32_t layers) {
    const Extent2D last = level_extent(desc.width, desc.height, pass.src_level + pass.levels);
    const bool whole_level = pass.tile_x == 0 && pass.tile_y == 0 && pass.tiles_x == last.width &&
                             pass.tiles_y == last.height && pass.levels == TVLM_BOX_MAX_LEVELS;
    const bool one_tile = next.src_level == pass.src_level + pass.levels && next.tile_x == 0 && next.tile_y == 0 &&
                          next.tiles_x == 1 && next.tiles_y == 1;
    return whole_level && one_tile && size_t{pass.tiles_x} * pass.tiles_y * layers <= blocks_at_once &&
           runs_packed(l) && runs_packed(next_l);
}

// The one-block tail launch (box_tail_kernel): level a+1 in kBoxTailTexels of shared
// memory, a+2 in a quarter of that.
size_t first_tail_pass(const TextureDesc& desc, const std::vector<BoxPass>& passes) {
    return first_box_tail_pass(desc.width, desc.height, desc.mip_levels(), passes,
                               {kBoxTailTexels, kBoxTailTexels / 4, kBoxTailMaxLevels});
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

CudaBoxMips::CudaBoxMips(const CudaMipmaps& texture, CudaBoxKernels kernels) : desc_(texture.desc), kernels_(kernels) {
    for (uint32_t level = 0; level < desc_.mip_levels(); ++level) surfaces_.push_back(texture.make_surface(level));
    // Passes fuse only where they rewrite a whole level, so the full chain's plan has every
    // fused pair any update can have.
    const std::vector<BoxPass> passes = plan_box_passes(desc_.width, desc_.height, desc_.mip_levels(),
                                                        {0, 0, desc_.width, desc_.height});
    blocks_at_once_ = packed_blocks_at_once(box_kind(desc_.format));
    std::vector<BoxMipsLaunch> launches;
    for (const BoxPass& pass : passes) launches.push_back(pass_launch(desc_, surfaces_, kernels_, pass, 0));
    // generate_from's plan, decided once: the chain's first pass reads the frame itself where
    // it runs the packed RGBA8 or RGBA16F kernel (and is not the one-block tail).
    frame_in_first_pass_ = (desc_.format == Format::rgba8_unorm || desc_.format == Format::rgba16f) &&
                           kernels_ == CudaBoxKernels::packed && first_tail_pass(desc_, passes) > 0 &&
                           runs_packed(launches[0]);
    size_t words = 0;
    for (size_t p = 0; p + 1 < passes.size(); ++p)
        if (fuses(desc_, blocks_at_once_, passes[p], launches[p], passes[p + 1], launches[p + 1], 1))
            words = std::max(words, size_t{passes[p].tiles_x} * passes[p].tiles_y);
    if (words) {
        tail_scratch_ = DeviceBuffer<uint2>(words * desc_.layers);
        tail_counters_ = DeviceBuffer<unsigned int>(desc_.layers);
        zero_device_now(tail_counters_.data(), tail_counters_.bytes());
    }
    // A tail can wait (generate_from's defer_tail) where it is the chain's last pass: no
    // later pass reads its levels. finish_deferred_tail()'s launch is built here, once.
    deferred_tail_level_ = desc_.mip_levels();
    if (const size_t last = passes.size() - 1; passes.size() >= 2 && first_tail_pass(desc_, passes) == passes.size() &&
                                               fuses(desc_, blocks_at_once_, passes[last - 1], launches[last - 1],
                                                     passes[last], launches[last], desc_.layers)) {
        deferrable_pass_ = last - 1;
        deferred_tail_level_ = passes[last].src_level + 1;
        deferred_tail_ = launches[deferrable_pass_];
        deferred_tail_.layers = desc_.layers;
        add_tail(deferred_tail_, launches[last], true);
    }
}

void CudaBoxMips::generate(cudaStream_t stream) const {
    launch({0, 0, desc_.width, desc_.height}, 0, desc_.layers, stream);
}

void CudaBoxMips::generate_from(const void* frame, size_t row_bytes, cudaStream_t stream, bool defer_tail) const {
    const FormatInfo& info = format_info(desc_.format);
    if (info.channels != 4)
        throw Error("a frame goes into a " + std::string(info.name) +
                    " texture through copy_to_level0: the "
                    "level-0 kernel writes 4-channel texels");
    const TensorDtype dtype = info.texel_bytes() == 4   ? TensorDtype::u8
                              : info.texel_bytes() == 8 ? TensorDtype::f16
                                                        : TensorDtype::f32;
    const size_t element = element_bytes(dtype);
    if (row_bytes < size_t{desc_.width} * info.texel_bytes() || row_bytes % element)
        throw Error("frame rows of " + std::to_string(row_bytes) + " bytes: a row of this texture has " +
                    std::to_string(size_t{desc_.width} * info.texel_bytes()) + " bytes, and rows must start on " +
                    std::to_string(element) + "-byte boundaries");
    cudaPointerAttributes attributes{};
    TVLM_CUDA_CHECK(cudaPointerGetAttributes(&attributes, frame));
    if (!frame || (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged))
        throw Error(
            "generate_from reads the frame with a kernel: pass CUDA device memory (a frame in host memory "
            "goes in with copy_to_level0)");
    // Where the chain's first pass runs the packed RGBA8 or RGBA16F kernel, it reads the frame
    // itself and writes level 0 on the way (FrameSource in cuda/mips/box_mips.cu): one launch
    // and one read of the frame fewer (docs/benchmarks.md, "A frame to patches").
    if (frame_in_first_pass_ && aligned16(frame) && row_bytes % 16 == 0) {
        run({0, 0, desc_.width, desc_.height}, 0, desc_.layers, nullptr, stream, {frame, row_bytes}, defer_tail);
        return;
    }
    // Otherwise a kernel copies the frame into level 0, then the chain runs. Rows of whole
    // 16-byte chunks are copied as they are, a warp storing 8 chunks x 4 rows (full sectors of
    // the array: level_copy.h); other rows texel by texel (tensor_texels.h).
    const LevelCopy chunks{
        frame, row_bytes,   desc_.width * info.texel_bytes(), desc_.height, surfaces_[0].get(), desc_.layers > 1,
        0,     desc_.layers};
    if (copies_in_chunks(chunks)) {
        copy_level_rows(chunks, stream);
    } else {
        const int64_t row = int64_t(row_bytes / element);
        const TensorView view{const_cast<void*>(frame), dtype, row * desc_.height, 1, row, 4, 4};
        write_texels(view, surfaces_[0].get(), desc_.layers > 1, surface_texel(desc_.format),
                     {0, 0, desc_.width, desc_.height, 0, desc_.layers}, stream);
    }
    run({0, 0, desc_.width, desc_.height}, 0, desc_.layers, nullptr, stream, {}, defer_tail);
}

void CudaBoxMips::finish_deferred_tail(cudaStream_t stream) const {
    if (deferred_tail_level_ < desc_.mip_levels()) launch_box_deferred_tail(deferred_tail_, stream);
}

void CudaBoxMips::add_tail(BoxMipsLaunch& l, const BoxMipsLaunch& next, bool deferred) const {
    std::copy(std::begin(next.dst), std::end(next.dst), std::begin(l.tail.dst));
    l.tail.levels = next.params.levels;
    l.tail.scratch = tail_scratch_.data();
    l.tail.counters = tail_counters_.data();
    l.tail.deferred = deferred;
}

void CudaBoxMips::update(const DirtyRegion& region, cudaStream_t stream) const {
    launch(checked_dirty_rect(region, desc_.width, desc_.height, desc_.layers), region.first_layer, region.layers,
           stream);
}

void CudaBoxMips::update_changed(const uint32_t* changed_tiles, cudaStream_t stream) const {
    if (desc_.layers != 1)
        throw Error("updates driven by changed tiles take one-layer textures (this one has " +
                    std::to_string(desc_.layers) + ")");
    if (!changed_tiles) throw Error("update_changed: no changed-tile flags (a null pointer)");
    run({0, 0, desc_.width, desc_.height}, 0, 1, changed_tiles, stream);
}

void CudaBoxMips::launch(TexelRect dirty, uint32_t first_layer, uint32_t layers, cudaStream_t stream) const {
    run(dirty, first_layer, layers, nullptr, stream);
}

void CudaBoxMips::run(TexelRect dirty, uint32_t first_layer, uint32_t layers, const uint32_t* changed_tiles,
                      cudaStream_t stream, BoxFrameInput frame, bool defer_tail) const {
    const std::vector<BoxPass> passes = plan_box_passes(desc_.width, desc_.height, desc_.mip_levels(), dirty);
    const size_t tail = first_tail_pass(desc_, passes);
    std::vector<BoxMipsLaunch> launches;
    for (size_t p = 0; p < tail; ++p)
        launches.push_back(pass_launch(desc_, surfaces_, kernels_, passes[p], first_layer));
    for (size_t p = 0; p < tail; ++p) {
        BoxMipsLaunch& l = launches[p];
        l.layers = layers;
        // Passes of one chain overlap. A first pass of the packed kernel overlaps the work before
        // it too (its blocks wait before they read or write, and let later launches begin only
        // after: packed_tile), which shortens back-to-back chains.
        l.after_pass = p > 0;
        l.overlap_launch = p > 0 || runs_packed(l);
        if (p == 0 && frame.texels) {
            l.frame = frame.texels;
            l.frame_row_bytes = frame.row_bytes;
        }
        if (p == 0 && changed_tiles) {
            l.changed_tiles = changed_tiles;
            l.changed_tiles_x = (desc_.width + TVLM_CHANGE_TILE - 1) / TVLM_CHANGE_TILE;
            l.changed_tiles_y = (desc_.height + TVLM_CHANGE_TILE - 1) / TVLM_CHANGE_TILE;
        } else if (p + 1 < tail &&
                   fuses(desc_, blocks_at_once_, passes[p], l, passes[p + 1], launches[p + 1], layers)) {
            add_tail(l, launches[p + 1],
                     defer_tail && p == deferrable_pass_ && deferred_tail_level_ < desc_.mip_levels());
            ++p;
        }
        launch_box_mips(l, stream);
    }
    if (tail < passes.size()) {
        BoxTailLaunch t;
        const uint32_t src = passes[tail].src_level;
        const Extent2D extent = level_extent(desc_.width, desc_.height, src);
        t.src = surfaces_[src].get();
        t.levels = desc_.mip_levels() - 1 - src;
        for (uint32_t j = 0; j < t.levels; ++j) t.dst[j] = surfaces_[src + 1 + j].get();
        t.src_width = extent.width;
        t.src_height = extent.height;
        t.kind = box_kind(desc_.format);
        t.first_layer = first_layer;
        t.layers = layers;
        t.layered = desc_.layers > 1;
        t.texel = surface_texel(desc_.format);
        t.overlap_launch = tail > 0;
        launch_box_tail(t, stream);
    }
}

}  // namespace tvlm
