// The box chain of a feature texture, levels 1.. from level 0, in T on channels-last
// levels: one thread per texel channel (or a tile per block), the arithmetic of
// engine/differentiable/. Its adjoint is feature_chain_fold.cu.
#include <algorithm>
#include <string>
#include <type_traits>

#include "cuda/cuda_check.h"
#include "cuda/early_launch.cuh"
#include "engine/error.h"
#include "cuda/differentiable/feature_chain_tiles.cuh"
#include "cuda/differentiable/point_sampling_grad.h"

namespace tvlm {

namespace {

using namespace feature_levels;

// Box taps of destination i over a source axis of size s (engine/mips/box_filter.h).
struct Taps {
    uint32_t first, count, weight[3], sum;
};
__device__ Taps taps(uint32_t i, uint32_t s) {
    if (s == 1) return {i, 1, {1, 0, 0}, 1};
    if (s % 2 == 0) return {2 * i, 2, {1, 1, 0}, 2};
    const uint32_t d = s / 2;
    return {2 * i, 3, {d - i, d, i + 1}, s};
}

template <class T>
__device__ T quarter(T v) {
    return v * T(0.25);
}
__device__ float4 quarter4(float4 v) { return v * 0.25f; }

// The 2x2 average of source texels (2x, 2y)..(2x+1, 2y+1) of plane `in` (multiplying by
// 1/4 is exactly /4).
template <class T>
__device__ T halved(const T* in, const Level& s, uint32_t x, uint32_t y) {
    const T* r = in + (size_t(2 * y) * s.width + 2 * x) * s.texel;
    const size_t row = size_t(s.width) * s.texel;
    return quarter((r[0] + r[s.texel]) + (r[row] + r[row + s.texel]));
}

// The box of destination (x, y) over source plane `in` (element 0 of a layer and channel).
// halving: both source sides even, every texel the 2x2 average (the general taps cost
// more instructions than the memory traffic allows).
template <class T>
__device__ T box_value(const T* in, const Level& s, uint32_t x, uint32_t y, bool halving) {
    if (halving) return halved(in, s, x, y);
    const Taps tx = taps(x, s.width), ty = taps(y, s.height);
    T n = 0;
#pragma unroll
    for (uint32_t b = 0; b < 3; ++b)  // fixed trip counts: the tap arrays stay in registers
#pragma unroll
        for (uint32_t a = 0; a < 3; ++a)
            if (b < ty.count && a < tx.count)
                n += T(tx.weight[a]) * T(ty.weight[b]) * in[(size_t(ty.first + b) * s.width + tx.first + a) * s.texel];
    return n / (T(tx.sum) * T(ty.sum));
}

// Grids are (element blocks of a row, rows, layers), a row's elements in (x, c) order,
// channels fastest: no 64-bit division per thread (the flat index version spent most of
// its time dividing); one 32-bit division splits the element into (x, c).
template <class T, bool kHalving>
__global__ void box_level_kernel(const T* src, T* dst, Level s, Level d, uint32_t channels) {
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, layer = blockIdx.z;
    if (e >= d.width * channels) return;
    const uint32_t x = e / channels, c = e - x * channels;
    dst[d.element(layer, size_t(y) * d.width + x, c)] = box_value(src + s.element(layer, 0, c), s, x, y, kHalving);
}

// Levels l+1 and l+2 from level l in one pass, where l and l+1 both halve: a thread takes
// one element of level l+2, averages the 4x4 of level l under it into the 2x2 of level l+1
// (written) and those into its own. Level l+1 is never read back: at 4096^2 RGBA that is
// 64 MB of the chain's 426. Sums in the order of the level-by-level kernels (bit-equal).
// (A float4 version for RGBA, a thread per texel, was no faster.)
template <class T>
__global__ void box_two_levels_kernel(const T* src, T* mid, T* dst, Level s, Level m, Level d, uint32_t channels) {
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, layer = blockIdx.z;
    if (e >= d.width * channels) return;
    const uint32_t x = e / channels, c = e - x * channels;
    const T* in = src + s.element(layer, 0, c);
    T* out = mid + m.element(layer, 0, c);
    const T v00 = halved(in, s, 2 * x, 2 * y), v10 = halved(in, s, 2 * x + 1, 2 * y);
    const T v01 = halved(in, s, 2 * x, 2 * y + 1), v11 = halved(in, s, 2 * x + 1, 2 * y + 1);
    const size_t row = size_t(m.width) * m.texel, at = (size_t(2 * y) * m.width + 2 * x) * m.texel;
    out[at] = v00;
    out[at + m.texel] = v10;
    out[at + row] = v01;
    out[at + row + m.texel] = v11;
    dst[d.element(layer, size_t(y) * d.width + x, c)] = quarter((v00 + v10) + (v01 + v11));
}

// Up to five levels that halve, from a coarse level (channels last): a block takes a
// 32x32 tile of the source level and four of its channels, averages it into the 16x16
// texels of the next level (a thread each), and those in shared memory into the 8x8, 4x4,
// 2x2 and 1x1 after it, writing each level as it goes. Level-by-level launches spent most
// of their time starting and draining (the levels after 2 took four launches, now two,
// in about three quarters of the time); the second launch
// is this kernel on one tile, the 32x32 level the first ends at. Sums in the order of the
// level-by-level kernels (bit-equal).
template <class T>
__global__ void __launch_bounds__(kBlock)
    box_pyramid_kernel(const __grid_constant__ Shape<T> shape, ChainLevels<T> chain, uint32_t source, uint32_t count,
                       bool vector4) {
    constexpr uint32_t kHalf = kPyramidSide / 2;  // the tile's side at level source + 1
    static_assert(kHalf * kHalf == kBlock, "a thread per texel of the first level built");
    __shared__ T tile[2][kHalf * kHalf][4];
    await_previous_kernel();
    const ChannelGroup group = channel_group(shape.channels);
    const uint32_t layer = group.layer, first = group.first, channels = group.count, t = threadIdx.x;
    {
        const Level &s = shape.level[source], &d = shape.level[source + 1];
        const uint32_t x = blockIdx.x * kHalf + t % kHalf, y = blockIdx.y * kHalf + t / kHalf;
        T v[4] = {0, 0, 0, 0};
        if (x < d.width && y < d.height) {
            const T* in = level_base(shape, chain, source) + s.element(layer, 0, first);
            T* out = level_base(shape, chain, source + 1) + d.element(layer, size_t(y) * d.width + x, first);
            if constexpr (std::is_same_v<T, float>) {
                if (vector4) {  // four channels of 16-byte aligned texels: one load a texel
                    const auto at = [&](uint32_t i, uint32_t j) {
                        return *reinterpret_cast<const float4*>(in + (size_t(j) * s.width + i) * s.texel);
                    };
                    const float4 sum = quarter4((at(2 * x, 2 * y) + at(2 * x + 1, 2 * y)) +
                                                (at(2 * x, 2 * y + 1) + at(2 * x + 1, 2 * y + 1)));
                    *reinterpret_cast<float4*>(out) = sum;
                    v[0] = sum.x, v[1] = sum.y, v[2] = sum.z, v[3] = sum.w;
                }
            }
            if (!vector4) {
#pragma unroll
                for (uint32_t c = 0; c < 4; ++c)
                    if (c < channels) out[c] = v[c] = halved(in + c, s, x, y);
            }
        }
#pragma unroll
        for (uint32_t c = 0; c < 4; ++c) tile[0][t][c] = v[c];
    }
    for (uint32_t k = 2; k <= count; ++k) {
        __syncthreads();
        const uint32_t side = kPyramidSide >> k;  // 8, 4, 2, 1
        if (t >= side * side) continue;
        const Level& d = shape.level[source + k];
        const uint32_t tx = t % side, ty = t / side, x = blockIdx.x * side + tx, y = blockIdx.y * side + ty;
        const T(*from)[4] = tile[k % 2];
        const uint32_t i00 = 2 * ty * 2 * side + 2 * tx;  // the 2x2 under (tx, ty), rows 2 * side apart
        T* out = x < d.width && y < d.height
                     ? level_base(shape, chain, source + k) + d.element(layer, size_t(y) * d.width + x, first)
                     : nullptr;
#pragma unroll
        for (uint32_t c = 0; c < 4; ++c) {
            const T v = quarter((from[i00][c] + from[i00 + 1][c]) +
                                (from[i00 + 2 * side][c] + from[i00 + 2 * side + 1][c]));
            tile[(k + 1) % 2][t][c] = v;
            if (out && c < channels) out[c] = v;
        }
    }
}

// Levels first.. of the chain, each from the one before.
template <class T>
__global__ void box_tail_kernel(const __grid_constant__ Shape<T> shape, ChainLevels<T> chain, uint32_t first) {
    for (uint32_t l = first; l < shape.levels; ++l) {
        const Level &s = shape.level[l - 1], &d = shape.level[l];
        const T* src = level_base(shape, chain, l - 1);
        T* dst = level_base(shape, chain, l);
        const bool halving = s.width % 2 == 0 && s.height % 2 == 0;
        const uint32_t count = d.width * d.height * shape.channels * shape.layers;
        for (uint32_t i = threadIdx.x; i < count; i += blockDim.x) {
            const ElementPlace p = place_of(i, d, shape.channels);
            dst[d.element(p.layer, size_t(p.y) * d.width + p.x, p.c)] = box_value(src + s.element(p.layer, 0, p.c), s,
                                                                                  p.x, p.y, halving);
        }
        __syncthreads();
    }
}

}  // namespace

void check_feature_chain(const FeatureChainShape& s) {
    if (s.layers == 0 || s.channels == 0 || s.width == 0 || s.height == 0)
        throw Error("a feature texture needs positive layers, channels, width and height");
    if (s.channels > 64) throw Error("feature textures hold 1..64 channels, not " + std::to_string(s.channels));
    if (s.height > 65535 || s.layers > 65535)
        throw Error("feature textures are at most 65535 texels high with at most 65535 layers");
    uint32_t full = 0;  // bit_width (this file is C++17)
    for (uint32_t size = std::max(s.width, s.height); size; size >>= 1) ++full;
    if (s.levels == 0 || s.levels > full || s.levels > kMaxLevels)
        throw Error("a " + std::to_string(s.width) + "x" + std::to_string(s.height) + " texture has 1.." +
                    std::to_string(std::min(full, kMaxLevels)) + " levels, not " + std::to_string(s.levels));
}

template <class T>
void build_feature_chain(const FeatureChainShape& shape, const T* level0, T* coarse, cudaStream_t stream) {
    check_feature_chain(shape);
    if (!level0 || (shape.levels > 1 && !coarse)) throw Error("a chain needs its level 0 and a buffer for the rest");
    const Shape<T> d = device_shape<T>(shape);
    const ChainLevels<T> chain{const_cast<T*>(level0), coarse};  // level 0 is only read
    uint32_t tail = 1;                                           // the first small level
    while (tail < shape.levels && shape.level_values(tail) > kTailValues) ++tail;
    const bool vector4 = std::is_same_v<T, float> && shape.channels % 4 == 0 && aligned16(coarse);
    // The largest level the pyramid starts from: 1024^2 with up to 4 channels (two
    // launches then build ten levels); with more, a block's texels lie C values apart, and
    // from 256^2 x 40 channels it ran slower than the two-level passes, so
    // there it starts from one tile (32x32, where the one-block tail took over).
    const uint32_t pyramid_source = shape.channels <= 4 ? 1024 : kPyramidSide;
    for (uint32_t l = 1; l < shape.levels;) {
        const Level &s = d.level[l - 1], &m = d.level[l];
        const T* src = level_base(d, chain, l - 1);
        T* dst = level_base(d, chain, l);
        // From a coarse level of at most 1024x1024: the levels that halve after it, five a
        // launch (the second launch's source is at most 32x32, one tile).
        const uint32_t run = halving_run(d, l - 1, shape.levels);
        if (l >= 2 && run >= 2 && s.width <= pyramid_source && s.height <= pyramid_source) {
            for (uint32_t built = 0; built < run;) {
                const uint32_t count = std::min(run - built, kPyramidLevels);
                launch_kernel_early(box_pyramid_kernel<T>, tile_grid(d.level[l + built], shape), dim3(kBlock), stream,
                                    true, d, chain, l - 1 + built, count, vector4);
                built += count;
            }
            l += run;
            continue;
        }
        if (l >= tail) {
            box_tail_kernel<T><<<1, kTailBlock, 0, stream>>>(d, chain, l);
            TVLM_CUDA_CHECK(cudaGetLastError());
            break;
        }
        if (l + 1 < tail && halves(s) && halves(m)) {  // levels l and l+1 in one pass
            const Level& n = d.level[l + 1];
            T* next = level_base(d, chain, l + 1);
            box_two_levels_kernel<T>
                <<<level_grid(n, shape), kBlock, 0, stream>>>(src, dst, next, s, m, n, shape.channels);
            TVLM_CUDA_CHECK(cudaGetLastError());
            l += 2;
            continue;
        }
        const dim3 grid = level_grid(m, shape);
        if (halves(s)) box_level_kernel<T, true><<<grid, kBlock, 0, stream>>>(src, dst, s, m, shape.channels);
        else box_level_kernel<T, false><<<grid, kBlock, 0, stream>>>(src, dst, s, m, shape.channels);
        TVLM_CUDA_CHECK(cudaGetLastError());
        ++l;
    }
}

template void build_feature_chain<float>(const FeatureChainShape&, const float*, float*, cudaStream_t);
template void build_feature_chain<double>(const FeatureChainShape&, const double*, double*, cudaStream_t);

}  // namespace tvlm
