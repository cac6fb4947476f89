// One thread per point (forward, backward) or per texel (chain, adjoint); the arithmetic
// of engine/differentiable/ in T. The backward scatters texel gradients with atomicAdd
// (points land anywhere); the adjoint gathers, so it needs none.
#include "point_sampling_grad.h"

#include <algorithm>
#include <string>

#include "cuda_check.h"
#include "error.h"

namespace tvlm {

namespace {

constexpr int kBlock = 256;

// Box taps of destination i over a source axis of size s (engine/box_filter.h).
struct Taps {
    uint32_t first, count, weight[3], sum;
};
__device__ Taps taps(uint32_t i, uint32_t s) {
    if (s == 1) return {i, 1, {1, 0, 0}, 1};
    if (s % 2 == 0) return {2 * i, 2, {1, 1, 0}, 2};
    const uint32_t d = s / 2;
    return {2 * i, 3, {d - i, d, i + 1}, s};
}

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

struct Level {
    uint32_t width, height;
    size_t offset;
};

// Grids of (column blocks, rows, planes): no 64-bit division per thread (the flat index
// version spent most of its time dividing).
// kHalving: both source sides even, every texel the 2x2 average (the general taps cost
// more instructions than the memory traffic allows; multiplying by 1/4 is exactly /4).
template <class T, bool kHalving>
__global__ void box_level_kernel(T* chain, Level src, Level dst) {
    const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, plane = blockIdx.z;
    if (x >= dst.width) return;
    const T* in = chain + src.offset + size_t(plane) * src.width * src.height;
    T* out = chain + dst.offset + (size_t(plane) * dst.height + y) * dst.width + x;
    if (kHalving) {
        const T* row = in + size_t(2 * y) * src.width + 2 * x;
        *out = ((row[0] + row[1]) + (row[src.width] + row[src.width + 1])) * T(0.25);
        return;
    }
    const Taps tx = taps(x, src.width), ty = taps(y, src.height);
    T n = 0;
#pragma unroll
    for (uint32_t b = 0; b < 3; ++b)  // fixed trip counts: the tap arrays stay in registers
#pragma unroll
        for (uint32_t a = 0; a < 3; ++a)
            if (b < ty.count && a < tx.count)
                n += T(tx.weight[a]) * T(ty.weight[b]) * in[size_t(ty.first + b) * src.width + tx.first + a];
    *out = n / (T(tx.sum) * T(ty.sum));
}

template <class T, bool kHalving>
__global__ void fold_level_kernel(T* grad, Level fine, Level coarse) {
    const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, plane = blockIdx.z;
    if (x >= fine.width) return;
    if (kHalving) {  // one dependent, weight 1/4
        grad[fine.offset + (size_t(plane) * fine.height + y) * fine.width + x] +=
            grad[coarse.offset + (size_t(plane) * coarse.height + y / 2) * coarse.width + x / 2] * T(0.25);
        return;
    }
    const Dependents dx = dependents(x, fine.width), dy = dependents(y, fine.height);
    const T* g = grad + coarse.offset + size_t(plane) * coarse.width * coarse.height;
    T sum = 0;
#pragma unroll
    for (uint32_t b = 0; b < 2; ++b)  // fixed trip counts: the arrays stay in registers
#pragma unroll
        for (uint32_t a = 0; a < 2; ++a)
            if (b < dy.count && a < dx.count)
                sum += g[size_t(dy.index[b]) * coarse.width + dx.index[a]] * T(dx.weight_num[a]) * T(dy.weight_num[b]);
    grad[fine.offset + (size_t(plane) * fine.height + y) * fine.width + x] += sum / (T(dx.sum) * T(dy.sum));
}

template <class T> struct Shape {
    uint32_t layers, channels, levels;
    Level level[16];
};

template <class T>
Shape<T> device_shape(const FeatureChainShape& s) {
    Shape<T> d{s.layers, s.channels, s.levels, {}};
    for (uint32_t l = 0; l < s.levels; ++l) d.level[l] = {s.level_width(l), s.level_height(l), s.offset(l)};
    return d;
}

// A bilinear sample's texels and weights in one level (clamp to edge).
template <class T> struct Bilinear {
    size_t i00, i10, i01, i11;  // offsets in the plane
    T a, b, width, height;
};

template <class T>
__device__ Bilinear<T> bilinear_at(const Level& level, T u, T v) {
    Bilinear<T> s;
    s.width = T(level.width);
    s.height = T(level.height);
    const T x = u * s.width - T(0.5), y = v * s.height - T(0.5);
    const T fx = floor(x), fy = floor(y);
    s.a = x - fx;
    s.b = y - fy;
    const auto clamp = [](T i, T size) { return size_t(fmin(fmax(i, T(0)), size - 1)); };
    const size_t x0 = clamp(fx, s.width), x1 = clamp(fx + 1, s.width);
    const size_t y0 = clamp(fy, s.height), y1 = clamp(fy + 1, s.height);
    s.i00 = y0 * level.width + x0;
    s.i10 = y0 * level.width + x1;
    s.i01 = y1 * level.width + x0;
    s.i11 = y1 * level.width + x1;
    return s;
}

template <class T> struct LodPair {
    uint32_t base;
    T blend;
    bool has_next, free;
};

template <class T>
__device__ LodPair<T> lod_pair(uint32_t levels, T lod) {
    const T top = T(levels - 1);
    const T clamped = fmin(fmax(lod, T(0)), top);
    LodPair<T> p;
    p.base = uint32_t(fmin(floor(clamped), top));
    p.blend = clamped - T(p.base);
    p.has_next = p.base + 1 < levels;
    p.free = lod > T(0) && lod < top;
    return p;
}

template <class T>
__device__ T bilinear_value(const T* plane, const Bilinear<T>& s) {
    return (1 - s.b) * ((1 - s.a) * plane[s.i00] + s.a * plane[s.i10]) +
           s.b * ((1 - s.a) * plane[s.i01] + s.a * plane[s.i11]);
}

// Plane (layer, c) of level l.
template <class T>
__device__ size_t plane_offset(const Shape<T>& shape, uint32_t l, uint32_t layer, uint32_t c) {
    const Level& level = shape.level[l];
    return level.offset + (size_t(layer) * shape.channels + c) * level.width * level.height;
}

template <class T>
__device__ uint32_t layer_of(const PointBatch<T>& points, size_t i, uint32_t layers) {
    if (!points.layer) return 0;
    return uint32_t(min(max(points.layer[i], 0), int32_t(layers) - 1));
}

template <class T>
__global__ void forward_kernel(const __grid_constant__ Shape<T> shape, const T* chain, PointBatch<T> points, T* out) {
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= points.count) return;
    const T u = points.uv[2 * i], v = points.uv[2 * i + 1];
    const LodPair<T> p = lod_pair(shape.levels, points.lod[i]);
    const uint32_t layer = layer_of(points, i, shape.layers);
    const Bilinear<T> lo = bilinear_at(shape.level[p.base], u, v);
    const bool blend = p.blend > T(0);
    const Bilinear<T> hi = bilinear_at(shape.level[blend ? p.base + 1 : p.base], u, v);
    for (uint32_t c = 0; c < shape.channels; ++c) {
        T value = bilinear_value(chain + plane_offset(shape, p.base, layer, c), lo);
        if (blend) value = (1 - p.blend) * value + p.blend * bilinear_value(chain + plane_offset(shape, p.base + 1, layer, c), hi);
        out[i * shape.channels + c] = value;
    }
}

// Texel gradients of the coarsest levels (those that fit in kSharedBytes together) are
// summed in shared memory by each block first, then added to the chain once per block:
// with points anywhere, thousands land on the few texels of the 2x2 and 1x1 levels, and
// global atomics on one address serialize (1M points on a 4096^2 chain: 6.6 ms of the
// backward with global atomics only). Blocks stride over the points, so they are few.
constexpr size_t kSharedBytes = 32 * 1024;

template <class T>
__global__ void backward_kernel(const __grid_constant__ Shape<T> shape, const T* chain, PointBatch<T> points,
                                const T* grad_out, T* grad_chain, T* grad_uv, T* grad_lod, size_t shared_base,
                                uint32_t shared_values) {
    extern __shared__ unsigned char shared_bytes[];
    T* sums = reinterpret_cast<T*>(shared_bytes);
    for (uint32_t k = threadIdx.x; k < shared_values; k += blockDim.x) sums[k] = 0;
    __syncthreads();
    const auto add = [&](size_t index, T value) {
        if (index >= shared_base) atomicAdd(sums + (index - shared_base), value);
        else atomicAdd(grad_chain + index, value);
    };
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < points.count; i += size_t(gridDim.x) * blockDim.x) {
        const T u = points.uv[2 * i], v = points.uv[2 * i + 1];
        const LodPair<T> p = lod_pair(shape.levels, points.lod[i]);
        const uint32_t layer = layer_of(points, i, shape.layers);
        T gu = 0, gv = 0, gl = 0;
        for (uint32_t k = 0; k < (p.has_next ? 2u : 1u); ++k) {
            const uint32_t l = p.base + k;
            const T weight = k == 0 ? 1 - p.blend : p.blend;
            const Bilinear<T> s = bilinear_at(shape.level[l], u, v);
            for (uint32_t c = 0; c < shape.channels; ++c) {
                const T go = grad_out[i * shape.channels + c];
                const size_t plane = plane_offset(shape, l, layer, c);
                const T* t = chain + plane;
                const T gw = go * weight;
                if (gw != T(0)) {
                    add(plane + s.i00, gw * (1 - s.a) * (1 - s.b));
                    add(plane + s.i10, gw * s.a * (1 - s.b));
                    add(plane + s.i01, gw * (1 - s.a) * s.b);
                    add(plane + s.i11, gw * s.a * s.b);
                }
                gu += gw * s.width * ((1 - s.b) * (t[s.i10] - t[s.i00]) + s.b * (t[s.i11] - t[s.i01]));
                gv += gw * s.height * ((1 - s.a) * (t[s.i01] - t[s.i00]) + s.a * (t[s.i11] - t[s.i10]));
                if (p.free) gl += go * (k == 0 ? T(-1) : T(1)) * bilinear_value(t, s);
            }
        }
        if (grad_uv) {
            grad_uv[2 * i] = gu;
            grad_uv[2 * i + 1] = gv;
        }
        if (grad_lod) grad_lod[i] = gl;
    }
    __syncthreads();
    for (uint32_t k = threadIdx.x; k < shared_values; k += blockDim.x)
        if (sums[k] != T(0)) atomicAdd(grad_chain + shared_base + k, sums[k]);
}

unsigned blocks_for(size_t threads) { return unsigned((threads + kBlock - 1) / kBlock); }

// Whether the next level of `level` is its 2x2 box in both axes.
bool halves(const Level& level) { return level.width % 2 == 0 && level.height % 2 == 0; }

dim3 level_grid(const Level& level, const FeatureChainShape& shape) {
    return dim3((level.width + kBlock - 1) / kBlock, level.height, shape.layers * shape.channels);
}

}  // namespace

void check_feature_chain(const FeatureChainShape& s) {
    if (s.layers == 0 || s.channels == 0 || s.width == 0 || s.height == 0)
        throw Error("a feature texture needs positive layers, channels, width and height");
    if (s.channels > 64) throw Error("feature textures hold 1..64 channels, not " + std::to_string(s.channels));
    if (s.height > 65535 || uint64_t{s.layers} * s.channels > 65535)
        throw Error("feature textures are at most 65535 texels high with at most 65535 layers x channels");
    uint32_t full = 0;  // bit_width (this file is C++17)
    for (uint32_t size = std::max(s.width, s.height); size; size >>= 1) ++full;
    if (s.levels == 0 || s.levels > full || s.levels > 16)
        throw Error("a " + std::to_string(s.width) + "x" + std::to_string(s.height) + " texture has 1.." +
                    std::to_string(std::min(full, 16u)) + " levels, not " + std::to_string(s.levels));
}

template <class T> void build_feature_chain(const FeatureChainShape& shape, T* chain, cudaStream_t stream) {
    check_feature_chain(shape);
    const Shape<T> d = device_shape<T>(shape);
    for (uint32_t l = 1; l < shape.levels; ++l) {
        const dim3 grid = level_grid(d.level[l], shape);
        if (halves(d.level[l - 1])) box_level_kernel<T, true><<<grid, kBlock, 0, stream>>>(chain, d.level[l - 1], d.level[l]);
        else box_level_kernel<T, false><<<grid, kBlock, 0, stream>>>(chain, d.level[l - 1], d.level[l]);
        TVLM_CUDA_CHECK(cudaGetLastError());
    }
}

template <class T>
void sample_points_forward(const FeatureChainShape& shape, const T* chain, const PointBatch<T>& points, T* out,
                           cudaStream_t stream) {
    check_feature_chain(shape);
    if (points.count == 0) return;
    if (!chain || !points.uv || !points.lod || !out) throw Error("point sampling needs a chain, uv, lod and an output");
    forward_kernel<T><<<blocks_for(points.count), kBlock, 0, stream>>>(device_shape<T>(shape), chain, points, out);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void sample_points_backward(const FeatureChainShape& shape, const T* chain, const PointBatch<T>& points,
                            const T* grad_out, T* grad_chain, T* grad_uv, T* grad_lod, cudaStream_t stream) {
    check_feature_chain(shape);
    if (!chain || !grad_out || !grad_chain || (points.count && (!points.uv || !points.lod)))
        throw Error("the backward needs the chain, the points, the output gradient and a chain gradient buffer");
    TVLM_CUDA_CHECK(cudaMemsetAsync(grad_chain, 0, shape.values() * sizeof(T), stream));
    if (points.count == 0) return;
    // The coarsest levels that fit in shared memory together (the chain's tail: levels are
    // stored finest first).
    uint32_t first_shared = shape.levels;
    while (first_shared > 0 && (shape.values() - shape.offset(first_shared - 1)) * sizeof(T) <= kSharedBytes)
        --first_shared;
    const size_t shared_base = shape.offset(first_shared);
    const auto shared_values = static_cast<uint32_t>(shape.values() - shared_base);
    int device = 0, processors = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&device));
    TVLM_CUDA_CHECK(cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device));
    const unsigned blocks = std::min(blocks_for(points.count), unsigned(4 * processors));
    backward_kernel<T><<<blocks, kBlock, shared_values * sizeof(T), stream>>>(
        device_shape<T>(shape), chain, points, grad_out, grad_chain, grad_uv, grad_lod, shared_base, shared_values);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

template <class T> void fold_chain_gradient(const FeatureChainShape& shape, T* grad_chain, cudaStream_t stream) {
    check_feature_chain(shape);
    const Shape<T> d = device_shape<T>(shape);
    for (uint32_t l = shape.levels - 1; l >= 1; --l) {
        const dim3 grid = level_grid(d.level[l - 1], shape);
        if (halves(d.level[l - 1]))
            fold_level_kernel<T, true><<<grid, kBlock, 0, stream>>>(grad_chain, d.level[l - 1], d.level[l]);
        else fold_level_kernel<T, false><<<grid, kBlock, 0, stream>>>(grad_chain, d.level[l - 1], d.level[l]);
        TVLM_CUDA_CHECK(cudaGetLastError());
    }
}

#define TVLM_POINT_SAMPLING(T)                                                                                       \
    template void build_feature_chain<T>(const FeatureChainShape&, T*, cudaStream_t);                                \
    template void sample_points_forward<T>(const FeatureChainShape&, const T*, const PointBatch<T>&, T*, cudaStream_t); \
    template void sample_points_backward<T>(const FeatureChainShape&, const T*, const PointBatch<T>&, const T*, T*, T*, \
                                            T*, cudaStream_t);                                                       \
    template void fold_chain_gradient<T>(const FeatureChainShape&, T*, cudaStream_t);
TVLM_POINT_SAMPLING(float)
TVLM_POINT_SAMPLING(double)

}  // namespace tvlm
