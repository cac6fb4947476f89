// The adjoint of the box chain (feature_chain_build.cu): every level's gradient folded into
// level 0, in T on channels-last levels. The adjoint gathers (each texel reads what its
// coarser texels send back), so it needs no atomics.
#include <algorithm>
#include <type_traits>

#include "cuda/cuda_check.h"
#include "cuda/early_launch.cuh"
#include "engine/error.h"
#include "cuda/fast_divmod.h"
#include "cuda/differentiable/feature_chain_tiles.cuh"
#include "cuda/differentiable/point_sampling_grad.h"
#include "cuda/tensors/element_pairs.cuh"

namespace tvlm {

namespace {

using namespace feature_levels;

// The destinations whose taps read source j on an axis of size s, with the tap's weight
// over the axis sum: at most two.
struct Dependents {
    uint32_t index[2];
    float weight_num[2];
    uint32_t count, sum;
};
__device__ Dependents dependents(uint32_t j, uint32_t s) {
    Dependents d{{0, 0}, {0, 0}, 0, 1};
    if (s == 1) return {{j, 0}, {1, 0}, 1, 1};
    if (s % 2 == 0) return {{j / 2, 0}, {1, 0}, 1, 2};
    const uint32_t half = s / 2;
    d.sum = s;
    if (j / 2 < half) {  // tap 0 or 1 of destination j / 2
        d.index[d.count] = j / 2;
        d.weight_num[d.count++] = float(j % 2 == 0 ? half - j / 2 : half);
    }
    if (j % 2 == 0 && j >= 2) {  // tap 2 of destination j / 2 - 1
        d.index[d.count] = j / 2 - 1;
        d.weight_num[d.count++] = float(j / 2);
    }
    return d;
}

// What the coarse level's gradient sends back to fine element (x, y) of a plane; `g` is
// the coarse plane's element 0 (a gather: no atomics).
template <class T>
__device__ T fold_value(const T* g, const Level& fine, const Level& coarse, uint32_t x, uint32_t y, bool halving) {
    if (halving) return g[(size_t(y / 2) * coarse.width + x / 2) * coarse.texel] * T(0.25);  // one dependent
    const Dependents dx = dependents(x, fine.width), dy = dependents(y, fine.height);
    T sum = 0;
#pragma unroll
    for (uint32_t b = 0; b < 2; ++b)  // fixed trip counts: the arrays stay in registers
#pragma unroll
        for (uint32_t a = 0; a < 2; ++a)
            if (b < dy.count && a < dx.count)
                sum += g[(size_t(dy.index[b]) * coarse.width + dx.index[a]) * coarse.texel] * T(dx.weight_num[a]) *
                       T(dy.weight_num[b]);
    return sum / (T(dx.sum) * T(dy.sum));
}

// Adds to each fine element what the coarse level's gradient sends back to it. kAssign:
// the fine level holds nothing yet (level 0, whose own texel gradients are scattered after
// the fold), so it is written, not read and written: the image's gradient is the largest
// buffer of the step, and this way it is touched once.
template <class T, bool kHalving, bool kAssign>
__global__ void fold_level_kernel(T* fine_grad, const T* coarse_grad, Level fine, Level coarse, uint32_t channels,
                                  uint32_t* nonfinite) {
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, layer = blockIdx.z;
    if (e >= fine.width * channels) return;
    const uint32_t x = e / channels, c = e - x * channels;
    T* out = fine_grad + fine.element(layer, size_t(y) * fine.width + x, c);
    const T sent = fold_value(coarse_grad + coarse.element(layer, 0, c), fine, coarse, x, y, kHalving);
    if (kAssign) raise_if_nonfinite(nonfinite, sent);
    *out = kAssign ? sent : *out + sent;
}

// Level 0's gradient written in one pass from levels 1..depth of the gradient (level depth
// already holding what the levels below it send back), where levels 0..depth-1 all halve:
// a level-0 texel then gets g_l[x >> l, y >> l] / 4^l from each. Written, never read;
// the level-by-level fold reads and writes every fine level once per step, and at 4096^2
// its level-0 pass alone took four times its bytes' time. The four level-0
// texels under one level-1 texel get the same sum: a thread computes it once and stores
// it four times (two rows of two). Up to 3 levels, or up to 6 where level 0 is small
// (kShortFold): there the launches of folding levels 4.. one by one are most of the fold's
// time, where on large images the extra reads per texel cost more than the launches save.
constexpr uint32_t kMaxFusedFold = 6, kFusedFold = 3;
constexpr size_t kShortFold = size_t{1} << 22;  // values of level 0

struct FusedFold {
    uint32_t width, height, channels, depth;
    uint32_t pair_rows;         // rows of level-0 row pairs: layers * height / 2
    size_t plane;               // texels of a level-0 plane (width * height)
    bool planar, pair_stores;   // pair_stores: planar, and x, x+1 stored as one 2-element vector
    FastDivmod by_half_height;  // pair row -> (layer, y / 2)
    uint32_t level_width[kMaxFusedFold + 1], level_height[kMaxFusedFold + 1];
    size_t coarse_offset[kMaxFusedFold + 1];  // level l's first element in the coarse buffer
};

// Level l's texel of level-0 texel (layer, x, y), channel 0.
template <class T>
__device__ const T* fold_source(const T* coarse, const FusedFold& f, uint32_t l, uint32_t layer, uint32_t x,
                                uint32_t y) {
    return coarse + f.coarse_offset[l] +
           ((size_t(layer) * f.level_height[l] + (y >> l)) * f.level_width[l] + (x >> l)) * f.channels;
}

// Channels last, float, channels % 4 == 0: a thread takes 4 consecutive elements of a
// level-0 row (4 channels of one texel), read as float4, and writes them to that texel and
// the one below it (the same sum): each store instruction of a warp is one run (a thread
// per texel with a loop over 40 channels wrote 160-byte strides: 4x slower; a thread per
// 2x2 texels wrote every other 16 bytes per instruction, also slower).
template <uint32_t kMost>  // the most levels it reads: kFusedFold or kMaxFusedFold (loops unrolled to it)
__global__ void fused_fold_groups_kernel(float* level0, const float* coarse, const __grid_constant__ FusedFold f,
                                         uint32_t* nonfinite) {
    await_previous_kernel();
    const uint32_t first = 4 * (blockIdx.x * blockDim.x + threadIdx.x), row_length = f.width * f.channels;
    if (first >= row_length) return;
    const uint32_t x = first / f.channels, c = first - x * f.channels;
    for (uint32_t r = blockIdx.y; r < f.pair_rows; r += gridDim.y) {
        uint32_t half_y;
        const uint32_t layer = f.by_half_height.divmod(r, half_y), y = 2 * half_y;
        float4 g[kMost + 1];
#pragma unroll
        for (uint32_t l = 1; l <= kMost; ++l)  // unrolled: the levels' reads in flight together
            if (l <= f.depth) g[l] = *reinterpret_cast<const float4*>(fold_source(coarse, f, l, layer, x, y) + c);
        float4 sum{0, 0, 0, 0};
        float weight = 1;
#pragma unroll
        for (uint32_t l = 1; l <= kMost; ++l) {
            weight *= 0.25f;
            if (l > f.depth) break;
            sum = sum + g[l] * weight;
        }
        // x * 0 is NaN exactly for a non-finite x (0 otherwise): one check for the four.
        raise_if_nonfinite(nonfinite, sum.x * 0.f + sum.y * 0.f + sum.z * 0.f + sum.w * 0.f);
        float* out = level0 + size_t(2 * r) * row_length + first;  // row 2r is (layer, y)
        *reinterpret_cast<float4*>(out) = sum;
        *reinterpret_cast<float4*>(out + row_length) = sum;
    }
}

// Any layout and channel count: a thread takes one level-1 texel and loops over its
// channels, finding each level's texel once, and writes the 2x2 level-0 texels under it;
// neighbouring lanes take neighbouring texels, so a planar level 0's stores coalesce
// channel by channel (x and x + 1 as one vector where aligned).
template <class T, uint32_t kMost>
__global__ void fused_fold_texels_kernel(T* level0, const T* coarse, const __grid_constant__ FusedFold f,
                                         uint32_t* nonfinite) {
    await_previous_kernel();
    const uint32_t half_x = blockIdx.x * blockDim.x + threadIdx.x;
    if (half_x >= f.width / 2) return;
    const uint32_t x = 2 * half_x, C = f.channels;
    for (uint32_t r = blockIdx.y; r < f.pair_rows; r += gridDim.y) {
        uint32_t half_y;
        const uint32_t layer = f.by_half_height.divmod(r, half_y), y = 2 * half_y;
        const T* from[kMost + 1];
#pragma unroll
        for (uint32_t l = 1; l <= kMost; ++l)
            if (l <= f.depth) from[l] = fold_source(coarse, f, l, layer, x, y);
        for (uint32_t c = 0; c < C; ++c) {
            T sum = 0, weight = 1;
#pragma unroll
            for (uint32_t l = 1; l <= kMost; ++l) {
                weight *= T(0.25);
                if (l > f.depth) break;
                sum += from[l][c] * weight;
            }
            raise_if_nonfinite(nonfinite, sum);
            if (f.planar) {
                T* out = level0 + (size_t(layer) * C + c) * f.plane + size_t(y) * f.width + x;
                if (f.pair_stores) {
                    using Pair = typename PairOf<T>::type;
                    *reinterpret_cast<Pair*>(out) = Pair{sum, sum};
                    *reinterpret_cast<Pair*>(out + f.width) = Pair{sum, sum};
                } else {
                    out[0] = out[1] = out[f.width] = out[f.width + 1] = sum;
                }
            } else {
                T* out = level0 + (size_t(2 * r) * f.width + x) * C + c;  // row 2r is (layer, y)
                out[0] = out[C] = sum;
                out[size_t(f.width) * C] = out[size_t(f.width + 1) * C] = sum;
            }
        }
    }
}

// The gradient's levels from the coarsest down to `last` folded each into the level above
// it (last >= 2: level 1 and finer are left to the large kernels).
template <class T>
__global__ void fold_tail_kernel(const __grid_constant__ Shape<T> shape, ChainLevels<T> grad, uint32_t last) {
    for (uint32_t l = shape.levels - 1; l >= last; --l) {
        const Level &fine = shape.level[l - 1], &coarse = shape.level[l];
        T* dst = level_base(shape, grad, l - 1);
        const T* g = level_base(shape, grad, l);
        const bool halving = fine.width % 2 == 0 && fine.height % 2 == 0;
        const uint32_t count = fine.width * fine.height * shape.channels * shape.layers;
        for (uint32_t i = threadIdx.x; i < count; i += blockDim.x) {
            const ElementPlace p = place_of(i, fine, shape.channels);
            dst[fine.element(p.layer, size_t(p.y) * fine.width + p.x, p.c)] += fold_value(
                g + coarse.element(p.layer, 0, p.c), fine, coarse, p.x, p.y, halving);
        }
        __syncthreads();
    }
}

// Level `target`'s gradient with levels target+1..top folded into it, where each of
// levels target..top-1 halves into the next: G_l = g_l + G_{l+1}[x / 2, y / 2] / 4, from the
// coarsest (the level-by-level kernels' sums). One launch where those took one a level,
// each mostly starting and draining. A block
// takes a 16x16 tile of `target` and four channels: the tile's ancestors four levels up
// are 8x8, 4x4, 2x2 and 1 texels of the tile, and above those one texel a level, a thread
// a channel. Every value is read first; then five steps through shared memory. (A thread
// per element finding its ancestors at every level took several times as long, in address
// arithmetic and dependent reads.) The levels between keep their
// own gradients (nothing reads them).
template <class T>
__global__ void __launch_bounds__(kBlock)
    fold_ancestors_kernel(const __grid_constant__ Shape<T> shape, ChainLevels<T> grad, uint32_t target, uint32_t top) {
    constexpr uint32_t kSide = kPyramidSide / 2, kInTile = kPyramidLevels - 1;  // 16x16; 4 levels above it in the tile
    __shared__ T folded[kInTile + 1][kSide / 2 * kSide / 2][4];                 // G of level target + k, k = 1..5
    const ChannelGroup group = channel_group(shape.channels);
    const uint32_t layer = group.layer, first = group.first, channels = group.count, t = threadIdx.x;
    const uint32_t count = top - target, in_tile = min(count, kInTile);
    // Texel i of the tile's part of level target + k, or null past the level's edge.
    const auto texel = [&](uint32_t k, uint32_t i) -> T* {
        const uint32_t side = kSide >> k, x = blockIdx.x * side + i % side, y = blockIdx.y * side + i / side;
        const Level& level = shape.level[target + k];
        if (x >= level.width || y >= level.height) return nullptr;
        return level_base(shape, grad, target + k) + level.element(layer, size_t(y) * level.width + x, first);
    };
    await_previous_kernel();
    // Threads 0..63 read the tile's 8x8 texels of level target + 1, 64..79 the 4x4 of
    // target + 2, 80..83 the 2x2, 84 the 1x1 (as far as `top`).
    uint32_t k_up = 0, index = 0;
    for (uint32_t k = 1, base = 0; k <= in_tile; base += (kSide >> k) * (kSide >> k), ++k)
        if (k_up == 0 && t >= base && t - base < (kSide >> k) * (kSide >> k)) k_up = k, index = t - base;
    T* out = texel(0, t);
    const T* above = k_up ? texel(k_up, index) : nullptr;
    T own[4] = {0, 0, 0, 0}, up[4] = {0, 0, 0, 0};
#pragma unroll
    for (uint32_t c = 0; c < 4; ++c)
        if (c < channels) {
            if (out) own[c] = out[c];
            if (above) up[c] = above[c];
        }
    // Levels above the tile's: one texel each, a channel a thread (threads 96..99), every
    // level read before the sums (a loop of dependent reads cost a latency a level).
    constexpr uint32_t kAboveThread = 96;
    if (count > kInTile && t >= kAboveThread && t - kAboveThread < channels) {
        const uint32_t c = first + t - kAboveThread;
        T g[kMaxLevels];
#pragma unroll
        for (uint32_t j = 0; j < kMaxLevels; ++j) {
            const uint32_t l = target + kPyramidLevels + j,
                           s = kPyramidLevels + j - kInTile;  // blockIdx: the tile at target + 4
            if (l > top) break;
            const Level& level = shape.level[l];
            g[j] = level_base(shape, grad,
                              l)[level.element(layer, size_t(blockIdx.y >> s) * level.width + (blockIdx.x >> s), c)];
        }
        T sum = 0;
#pragma unroll
        for (uint32_t j = kMaxLevels; j-- > 0;) {
            const uint32_t l = target + kPyramidLevels + j;
            if (l <= top) sum = l == top ? g[j] : g[j] + sum * T(0.25);
        }
        folded[kInTile][0][t - kAboveThread] = sum;
    }
    // From the top of the tile down: level target + k's G = g + G of its parent / 4.
    for (uint32_t k = in_tile; k >= 1; --k) {
        __syncthreads();
        const uint32_t side = kSide >> k;
        if (k == k_up && above) {
            const uint32_t parent = (index / side / 2) * (side / 2) + (index % side) / 2;
#pragma unroll
            for (uint32_t c = 0; c < 4; ++c)
                folded[k - 1][index][c] = k == count ? up[c] : up[c] + folded[k][parent][c] * T(0.25);
        }
    }
    __syncthreads();
    if (!out) return;
    const uint32_t parent = (t / kSide / 2) * (kSide / 2) + (t % kSide) / 2;
#pragma unroll
    for (uint32_t c = 0; c < 4; ++c)
        if (c < channels) out[c] = count == 0 ? own[c] : own[c] + folded[0][parent][c] * T(0.25);
}

}  // namespace

template <class T>
void fold_chain_gradient(const FeatureChainShape& shape, ChainLevels<T> grad, cudaStream_t stream,
                         uint32_t* nonfinite) {
    check_feature_chain(shape);
    if (!grad.level0 || (shape.levels > 1 && !grad.coarse)) throw Error("the fold needs the gradient's two parts");
    if (shape.levels == 1) {
        TVLM_CUDA_CHECK(cudaMemsetAsync(grad.level0, 0, shape.level_values(0) * sizeof(T), stream));
        return;
    }
    const Shape<T> d = device_shape<T>(shape);
    // Levels 0..depth-1 halve: level 0 is written from levels 1..depth in one pass, after
    // the levels below depth are folded into it. Those that halve on from it (to `top`)
    // in one launch; coarser ones, after an odd side, one by one (they are small).
    uint32_t depth = 0;
    const uint32_t most = shape.level_values(0) <= kShortFold ? kMaxFusedFold : kFusedFold;
    while (depth < std::min(most, shape.levels - 1) && halves(d.level[depth])) ++depth;
    const uint32_t target = std::max(depth, 1u);  // the finest level folded before the last step
    const uint32_t top = target + halving_run(d, target, shape.levels);
    const uint32_t last = top + 1;  // the finest level folded level by level
    uint32_t tail = shape.levels;   // levels tail.. fold in one block
    while (tail > last && shape.level_values(tail - 2) <= kTailValues) --tail;
    if (tail < shape.levels) {
        fold_tail_kernel<T><<<1, kTailBlock, 0, stream>>>(d, grad, tail);
        TVLM_CUDA_CHECK(cudaGetLastError());
    }
    for (uint32_t l = tail - 1; l >= last; --l) {
        const dim3 grid = level_grid(d.level[l - 1], shape);
        T* fine = level_base(d, grad, l - 1);
        const T* coarse = level_base(d, grad, l);
        if (halves(d.level[l - 1]))
            fold_level_kernel<T, true, false>
                <<<grid, kBlock, 0, stream>>>(fine, coarse, d.level[l - 1], d.level[l], shape.channels, nullptr);
        else
            fold_level_kernel<T, false, false>
                <<<grid, kBlock, 0, stream>>>(fine, coarse, d.level[l - 1], d.level[l], shape.channels, nullptr);
        TVLM_CUDA_CHECK(cudaGetLastError());
    }
    if (top > target) {
        launch_kernel_early(fold_ancestors_kernel<T>, tile_grid(d.level[target], shape), dim3(kBlock), stream, true, d,
                            grad, target, top);
    }
    if (depth == 0) {  // level 0 has an odd side: its taps take the general path
        fold_level_kernel<T, false, true><<<level_grid(d.level[0], shape), kBlock, 0, stream>>>(
            grad.level0, grad.coarse, d.level[0], d.level[1], shape.channels, nonfinite);
        TVLM_CUDA_CHECK(cudaGetLastError());
        return;
    }
    FusedFold f{};
    f.width = shape.width;
    f.height = shape.height;
    f.channels = shape.channels;
    f.depth = depth;
    f.pair_rows = shape.layers * (shape.height / 2);
    f.plane = size_t{shape.width} * shape.height;
    f.planar = shape.planar_level0;
    f.pair_stores = f.planar && reinterpret_cast<uintptr_t>(grad.level0) % (2 * sizeof(T)) == 0;
    f.by_half_height = FastDivmod(shape.height / 2);
    for (uint32_t l = 1; l <= depth; ++l) {
        f.level_width[l] = shape.level_width(l);
        f.level_height[l] = shape.level_height(l);
        f.coarse_offset[l] = shape.offset(l) - shape.level_values(0);
    }
    const uint32_t grid_rows = std::min(f.pair_rows, 65535u);
    bool groups = false;
    if constexpr (std::is_same_v<T, float>)
        groups = !shape.planar_level0 && shape.channels % 4 == 0 && aligned16(grad.level0) && aligned16(grad.coarse);
    // Each kernel's loops unroll to its most levels: one for 6 levels ran the 3-level folds
    // of large images 10% slower.
    const dim3 group_grid(blocks_for(shape.width * shape.channels / 4), grid_rows);
    const dim3 texel_grid(blocks_for(shape.width / 2), grid_rows);
    float* level0 = reinterpret_cast<float*>(grad.level0);
    const float* coarse = reinterpret_cast<const float*>(grad.coarse);
    // Launched early: its start overlaps the kernel before it (fold_ancestors_kernel).
    if (groups && most == kFusedFold)
        launch_kernel_early(fused_fold_groups_kernel<kFusedFold>, group_grid, dim3(kBlock), stream, true, level0,
                            coarse, f, nonfinite);
    else if (groups)
        launch_kernel_early(fused_fold_groups_kernel<kMaxFusedFold>, group_grid, dim3(kBlock), stream, true, level0,
                            coarse, f, nonfinite);
    else if (most == kFusedFold)
        launch_kernel_early(fused_fold_texels_kernel<T, kFusedFold>, texel_grid, dim3(kBlock), stream, true,
                            grad.level0, static_cast<const T*>(grad.coarse), f, nonfinite);
    else
        launch_kernel_early(fused_fold_texels_kernel<T, kMaxFusedFold>, texel_grid, dim3(kBlock), stream, true,
                            grad.level0, static_cast<const T*>(grad.coarse), f, nonfinite);
}

template void fold_chain_gradient<float>(const FeatureChainShape&, ChainLevels<float>, cudaStream_t, uint32_t*);
template void fold_chain_gradient<double>(const FeatureChainShape&, ChainLevels<double>, cudaStream_t, uint32_t*);

}  // namespace tvlm
