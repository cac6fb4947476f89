// Differentiable point sampling on CUDA, the backward: which kernel, which levels it sums
// in shared memory, and the order of a backward: the coarse levels' texel atomics (with
// d/d uv and d/d lod), the fold writing level 0 (feature_chain_fold.cu), level 0's atomics.
// The backward scatters texel gradients with atomics: points land anywhere.
#include <algorithm>
#include <type_traits>
#include <utility>

#include "cuda/cuda_check.h"
#include "cuda/cuda_devices.h"
#include "engine/error.h"
#include "cuda/differentiable/point_backward_each.cuh"
#include "cuda/differentiable/point_backward_groups.cuh"
#include "cuda/differentiable/point_backward_level0.cuh"
#include "cuda/differentiable/point_backward_rgba.cuh"
#include "cuda/differentiable/point_sampling_grad.h"

namespace tvlm {

namespace {

using namespace point_kernels;

// The coarsest levels of [first, end) whose elements fit in `room` together (the index
// space's tail: levels are counted finest first), each of at most `max_texels` texels (all
// layers), as (first element, count); none: count 0.
uint32_t coarsest_levels_from(const FeatureChainShape& shape, uint32_t first, uint32_t end, size_t room,
                              size_t max_texels) {
    uint32_t from = end;
    while (from > first && shape.offset(end) - shape.offset(from - 1) <= room &&
           shape.level_values(from - 1) / shape.channels <= max_texels)
        --from;
    return from;
}
std::pair<size_t, uint32_t> shared_levels(const FeatureChainShape& shape, uint32_t first, uint32_t end, size_t room,
                                          size_t max_texels) {
    const uint32_t from = coarsest_levels_from(shape, first, end, room, max_texels);
    return {shape.offset(from), static_cast<uint32_t>(shape.offset(end) - shape.offset(from))};
}

// The groups kernel's copies: the slots' (up to kGroupsSlotBytes) and the block's (the
// rest of kGroupsSharedBytes), above the 48 KB a kernel gets without opting in; three
// blocks an SM still fit. Where a warp holds at most 8 points (4 lanes a point or more),
// the block's copy takes only levels of fewer than kGroupsBlockTexels texels, where global
// atomics would queue on a few addresses: on larger ones the L2's vector atomics beat the
// copy's compare-and-swap loops. With 16 points a warp (8 channels) the copy takes every
// level that fits (the limit is faster for 16 channels and more, slower for 8).
constexpr size_t kGroupsSharedBytes = 64 * 1024, kGroupsSlotBytes = 56 * 1024, kGroupsBlockTexels = 64;

SharedSums groups_shared_sums(const FeatureChainShape& shape, uint32_t lanes, uint32_t first, uint32_t end,
                              size_t max_texels) {
    const size_t slots = kBlock / lanes;
    const uint32_t slot_from = coarsest_levels_from(shape, first, end, kGroupsSlotBytes / (slots * sizeof(float)),
                                                    max_texels);
    const size_t slot_values = shape.offset(end) - shape.offset(slot_from);
    const size_t block_texels = lanes >= 4 ? std::min(max_texels, kGroupsBlockTexels - 1) : max_texels;
    const uint32_t block_from = coarsest_levels_from(
        shape, first, slot_from, kGroupsSharedBytes / sizeof(float) - slots * slot_values, block_texels);
    return {shape.offset(block_from), shape.offset(slot_from), static_cast<uint32_t>(slot_values)};
}

}  // namespace

template <class T>
void sample_points_backward(const FeatureChainShape& shape, ChainLevels<const T> chain, const PointBatch<T>& points,
                            const T* grad_out, ChainLevels<T> grad, T* grad_uv, T* grad_lod, cudaStream_t stream,
                            uint32_t* nonfinite) {
    check_feature_chain(shape);
    const bool coarse = shape.levels > 1, texture = grad.level0 != nullptr;
    if (!chain.level0 || (coarse && !chain.coarse) || (texture && coarse && !grad.coarse) ||
        (points.count && (!points.uv || !points.lod || !grad_out)))
        throw Error(
            "the backward needs the chain, the points, the output gradient, and a coarse gradient buffer "
            "where it has a gradient buffer for level 0");
    // Level 0's gradient is the image's: the largest buffer, so it is never zeroed nor read
    // back. The coarse levels gather their texel gradients first, the fold writes level 0
    // from them, then level 0's own texel gradients are added on top.
    if (texture && coarse) TVLM_CUDA_CHECK(cudaMemsetAsync(grad.coarse, 0, shape.coarse_values() * sizeof(T), stream));
    const Shape<T> d = device_shape<T>(shape);
    // Float channels in groups of 4 (float4 loads and vector atomics); RGBA: every point on
    // the float4 path, a copy of the shared levels per warp.
    const bool groups = groups4<T>(shape, {chain.level0, chain.coarse, grad.level0, grad.coarse, grad_out});
    const bool rgba = groups && shape.channels == 4;
    const void* kernel = rgba     ? reinterpret_cast<const void*>(backward_rgba_kernel)
                         : groups ? reinterpret_cast<const void*>(backward_groups_kernel)
                                  : reinterpret_cast<const void*>(backward_kernel<T>);
    const size_t copies = rgba ? kWarps : 1, room = (rgba ? kRgbaSharedBytes : kSharedBytes) / (copies * sizeof(T));
    const size_t most_shared = groups && !rgba ? kGroupsSharedBytes : room * copies * sizeof(T);
    // One wave: as many blocks as the multiprocessors hold at once (registers bound it: 3 of
    // 256 threads on sm_90), each striding over the points and adding its shared sums once.
    // A part wave costs: 4 blocks per SM (1.33 waves) made the RGBA backward slower than 3
    // or 6.
    const unsigned blocks = std::min(blocks_for(points.count * d.lanes),
                                     resident_wave_blocks(kernel, int(kBlock), most_shared));
    // A level is summed in shared memory where it has at most a quarter as many texels as a
    // block has points: then the block's adds to it are likely to outnumber its texels, and
    // its flush costs fewer global atomics than it saves (a sixteenth sent 64-texel levels
    // to global atomics, which cost far more).
    const size_t max_texels = points.count / std::max(blocks, 1u) / 4;
    const auto run = [&](BackwardPass pass) {
        if constexpr (std::is_same_v<T, float>) {
            if (groups && !rgba) {
                const SharedSums sums = groups_shared_sums(shape, d.lanes, pass.first, pass.end, max_texels);
                const size_t bytes = (kBlock / d.lanes * sums.slot_values + sums.block_values()) * sizeof(float);
                backward_groups_kernel<<<blocks, kBlock, bytes, stream>>>(d, chain, points, grad_out, grad, grad_uv,
                                                                          grad_lod, pass, sums, nonfinite);
                TVLM_CUDA_CHECK(cudaGetLastError());
                return;
            }
        }
        // The other kernels keep one range of levels in shared memory, a copy per warp (RGBA)
        // or per block.
        const auto [shared_base, shared_values] = shared_levels(shape, pass.first, pass.end, room, max_texels);
        const size_t shared_bytes = shared_values * copies * sizeof(T);
        if constexpr (std::is_same_v<T, float>) {
            if (rgba) {
                backward_rgba_kernel<<<blocks, kBlock, shared_bytes, stream>>>(
                    d, chain, points, grad_out, grad, grad_uv, grad_lod, pass, shared_base, shared_values, nonfinite);
                TVLM_CUDA_CHECK(cudaGetLastError());
                return;
            }
        }
        backward_kernel<T><<<blocks, kBlock, shared_bytes, stream>>>(
            d, chain, points, grad_out, grad, grad_uv, grad_lod, pass, shared_base, shared_values, nonfinite);
        TVLM_CUDA_CHECK(cudaGetLastError());
    };
    // A texture that takes no gradient (a model learning where to look in a fixed image):
    // d/d uv and d/d lod alone, one pass over the points that reads what the forward read,
    // with no zeroing, texel atomics or fold: a fraction of the backward with the
    // texture's gradient.
    if (!texture) {
        if (points.count) run({0, 0, true});
        return;
    }
    if (points.count) run({1, shape.levels, true});
    fold_chain_gradient(shape, grad, stream, nonfinite);
    if (!points.count) return;
    // Level 0 summed in shared memory (a tiny texture under many points: global atomics on
    // its few texels would serialize) takes the strided kernel; otherwise the lean one. The
    // groups kernel has its own copies, so it is asked where it would put level 0.
    const bool level0_shared = groups && !rgba
                                   ? groups_shared_sums(shape, d.lanes, 0, 1, max_texels).block_first < shape.offset(1)
                                   : shared_levels(shape, 0, 1, room, max_texels).second != 0;
    if (level0_shared) return run({0, 1, false});
    const unsigned level0_blocks = blocks_for(points.count * d.lanes);
    if (rgba) {
        if constexpr (std::is_same_v<T, float>)
            launch_kernel_early(backward_level0_kernel<float, Channels::rgba>, dim3(level0_blocks), dim3(kBlock),
                                stream, true, d, points, grad_out, grad.level0);
    } else if (groups) {
        if constexpr (std::is_same_v<T, float>)
            launch_kernel_early(backward_level0_kernel<float, Channels::groups>, dim3(level0_blocks), dim3(kBlock),
                                stream, true, d, points, grad_out, grad.level0);
    } else {
        launch_kernel_early(backward_level0_kernel<T, Channels::each>, dim3(level0_blocks), dim3(kBlock), stream, true,
                            d, points, grad_out, grad.level0);
    }
}

template void sample_points_backward<float>(const FeatureChainShape&, ChainLevels<const float>,
                                            const PointBatch<float>&, const float*, ChainLevels<float>, float*, float*,
                                            cudaStream_t, uint32_t*);
template void sample_points_backward<double>(const FeatureChainShape&, ChainLevels<const double>,
                                             const PointBatch<double>&, const double*, ChainLevels<double>, double*,
                                             double*, cudaStream_t, uint32_t*);

}  // namespace tvlm
