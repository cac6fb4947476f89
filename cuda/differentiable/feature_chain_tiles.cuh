#pragma once
// What the box chain's kernels (feature_chain_build.cu) and its adjoint's
// (feature_chain_fold.cu) share: the tiles of the pyramid kernels, the one-block tail of
// small levels, and the grids over a level. Internal to cuda/differentiable/.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/differentiable/feature_levels.cuh"

namespace tvlm::feature_levels {

// The pyramid kernels (box_pyramid_kernel, fold_ancestors_kernel) take a 32x32 tile of a
// level and the levels above it that halve: up to five.
inline constexpr uint32_t kPyramidLevels = 5, kPyramidSide = 1u << kPyramidLevels;  // source tile side

// The tiled kernels' blocks take four channels of one layer: blockIdx.z is (layer, group).
struct ChannelGroup {
    uint32_t layer, first, count;  // channels first .. first + count - 1 (count <= 4)
};
inline __device__ ChannelGroup channel_group(uint32_t channels) {
    const uint32_t groups = (channels + 3) / 4, group = blockIdx.z % groups;
    return {blockIdx.z / groups, 4 * group, min(4u, channels - 4 * group)};
}

// The small levels of a chain (and of its fold) in one block, level after level: a launch
// costs microseconds even for one block, and a 4096^2 chain has nine levels of 64x64 or
// less (a sixth of its time as separate launches). A level is small when it holds
// at most kTailValues elements: one block is one multiprocessor, and with 16384 (64x64
// RGBA) the tail took longer than the launches it saved. The block's writes are
// visible to it after a barrier.
inline constexpr uint32_t kTailValues = 2048, kTailBlock = 1024;

// (layer, x, y, c) of element i of a level's (layer, y, x, c) order.
struct ElementPlace {
    uint32_t layer, x, y, c;
};
inline __device__ ElementPlace place_of(uint32_t i, const Level& level, uint32_t channels) {
    const uint32_t row = level.width * channels, layer_size = row * level.height;
    ElementPlace p;
    p.layer = i / layer_size;
    const uint32_t in_layer = i - p.layer * layer_size;
    p.y = in_layer / row;
    const uint32_t e = in_layer - p.y * row;
    p.x = e / channels;
    p.c = e - p.x * channels;
    return p;
}

// Whether the next level of `level` is its 2x2 box in both axes.
inline bool halves(const Level& level) { return level.width % 2 == 0 && level.height % 2 == 0; }

// The tiled kernels' grid over `level`: its 16x16 tiles, and (layer, channel group).
inline dim3 tile_grid(const Level& level, const FeatureChainShape& shape) {
    constexpr uint32_t side = kPyramidSide / 2;
    return dim3((level.width + side - 1) / side, (level.height + side - 1) / side,
                ((shape.channels + 3) / 4) * shape.layers);
}

// How many levels after `from` each halve the one before (from -> from + 1 -> ...).
template <class T>
uint32_t halving_run(const Shape<T>& d, uint32_t from, uint32_t levels) {
    uint32_t run = 0;
    while (from + run + 1 < levels && halves(d.level[from + run])) ++run;
    return run;
}

// (element blocks of a row of `level`, its rows, layers).
inline dim3 level_grid(const Level& level, const FeatureChainShape& shape) {
    return dim3(unsigned((size_t(level.width) * shape.channels + kBlock - 1) / kBlock), level.height, shape.layers);
}

}  // namespace tvlm::feature_levels
