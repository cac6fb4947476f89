#include "cuda/fields/gaussian_field_kernels.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "cuda/cuda_check.h"
#include "cuda/cuda_devices.h"
#include "engine/error.h"
#include "engine/fields/gaussian_pair.h"

namespace tvlm {

namespace {

using fields::kTriangle;
constexpr int kThreads = 256;

__device__ inline float exp_of(float x) { return __expf(x); }
__device__ inline double exp_of(double x) { return exp(x); }

// The forward's exponential with its constant folded into the Mahalanobis scale
// (mahalanobis_scaled): float exp(-q/2) = 2^(-q s^2) with s^2 = log2(e) / 2, the SFU's
// ex2 (what __expf runs, without its multiply); double keeps exp, s^2 = 1/2.
template <class T>
struct ScaledExp;
template <>
struct ScaledExp<float> {
    static constexpr double kScale2 = 0.72134752044448170368;  // log2(e) / 2
    static constexpr double kScale = 0.84932180028801904272;   // its square root
    __device__ static float of(float q_scaled) {
        float e;
        asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(-q_scaled));
        return e;
    }
};
template <>
struct ScaledExp<double> {
    static constexpr double kScale2 = 0.5;
    static constexpr double kScale = 0.70710678118654752440;
    __device__ static double of(double q_scaled) { return exp(-q_scaled); }
};

// One Gaussian as the forward reads it for each pair, 16-byte aligned so that a copy to
// registers is a few 128-bit shared loads (the forward is issue-bound: before this, ten
// scalar loads per pair were a third of its instructions).
template <int D, class T>
struct alignas(16) ForwardGaussian {
    T mean[D];
    T weight;
    T lower[kTriangle<D> - D];  // L below the diagonal, divided by s
    T inv[D];                   // 1 / L(i, i), times s
};

// A tile of up to kThreads Gaussians of [first, end) staged in shared memory by the whole
// block, with the reciprocals of their diagonals (one division per Gaussian and block).
template <int D, class T>
struct GaussianTile {
    T means[kThreads * D];
    T cholesky[kThreads * kTriangle<D>];
    T inverse_diagonal[kThreads * D];
    T weights[kThreads];

    __device__ int load(const FieldArgs<T>& f, size_t first, size_t end) {
        const int count = int(min(size_t(kThreads), end - first));
        __syncthreads();  // the previous tile is no longer read
        for (int i = threadIdx.x; i < count * D; i += kThreads) means[i] = f.means[first * D + size_t(i)];
        for (int i = threadIdx.x; i < count * kTriangle<D>; i += kThreads)
            cholesky[i] = f.cholesky[first * kTriangle<D> + size_t(i)];
        if (int(threadIdx.x) < count) {
            weights[threadIdx.x] = f.weights[first + threadIdx.x];
            for (int i = 0; i < D; ++i)
                inverse_diagonal[threadIdx.x * D + i] =
                    T(1) / f.cholesky[(first + threadIdx.x) * kTriangle<D> + size_t(fields::tri(i, i))];
        }
        __syncthreads();
        return count;
    }
};

// The Gaussians of block row blockIdx.y: [y * per_chunk, min(N, (y + 1) * per_chunk)).
struct Chunk {
    size_t begin, end;
};
template <class T>
__device__ Chunk chunk_of(const FieldArgs<T>& f, size_t per_chunk) {
    const size_t begin = size_t(blockIdx.y) * per_chunk;
    return {begin, min(begin + per_chunk, f.count)};
}

// Writes where one block row covers everything, adds where several do (zeroed first).
template <class T>
__device__ void put(T* to, T value, bool add) {
    if (add) atomicAdd(to, value);
    else *to = value;
}

// Thread (x, y): points blockIdx.x * kThreads * kForwardPoints + threadIdx.x + p * kThreads
// against Gaussian chunk y. Each staged Gaussian serves kForwardPoints points from
// registers, so its loads are spent once per kForwardPoints pairs.
template <int D, class T, int kForwardPoints>
__global__ void __launch_bounds__(kThreads) forward_kernel(FieldArgs<T> f, size_t per_chunk, T* values, T* squared) {
    __shared__ ForwardGaussian<D, T> tile[kThreads];
    const T s = T(ScaledExp<T>::kScale), unscale = T(1 / ScaledExp<T>::kScale2);
    size_t b[kForwardPoints];
    bool active[kForwardPoints];
    T x[kForwardPoints][D], sum[kForwardPoints] = {};
    for (int p = 0; p < kForwardPoints; ++p) {
        b[p] = size_t(blockIdx.x) * kThreads * kForwardPoints + threadIdx.x + size_t(p) * kThreads;
        active[p] = b[p] < f.points_count;
        for (int i = 0; i < D; ++i) x[p][i] = active[p] ? f.points[b[p] * D + size_t(i)] : T(0);
    }
    const Chunk chunk = chunk_of(f, per_chunk);
    for (size_t first = chunk.begin; first < chunk.end; first += kThreads) {
        const int count = int(min(size_t(kThreads), chunk.end - first));
        __syncthreads();  // the previous tile is no longer read
        if (int(threadIdx.x) < count) {
            const size_t n = first + threadIdx.x;
            ForwardGaussian<D, T> g;
            const T* L = &f.cholesky[n * kTriangle<D>];
            bool valid = true;
            for (int i = 0; i < D; ++i) {
                const T diagonal = L[fields::tri(i, i)];
                valid = valid && diagonal > T(0) && isfinite(diagonal);  // false for NaN too
                g.mean[i] = f.means[n * D + size_t(i)];
                g.inv[i] = s / diagonal;
                for (int j = 0; j < i; ++j) g.lower[i * (i - 1) / 2 + j] = L[fields::tri(i, j)] / s;
            }
            g.weight = f.weights[n];
            // Refused, as check_field refuses host copies: the values it reaches are NaN, not
            // plausible numbers, and the caller learns why from the flag.
            if (!valid) {
                g.weight = T(NAN);
                if (f.refused) *f.refused = 1;
            }
            tile[threadIdx.x] = g;
        }
        __syncthreads();
        if (!active[0]) continue;
        for (int k = 0; k < count; ++k) {
            const ForwardGaussian<D, T> g = tile[k];
            for (int p = 0; p < kForwardPoints; ++p) {
                const T q = fields::mahalanobis_scaled<D>(x[p], g.mean, g.lower, g.inv);
                sum[p] += g.weight * ScaledExp<T>::of(q);
                if (squared && active[p]) squared[b[p] * f.count + first + size_t(k)] = q * unscale;
            }
        }
    }
    for (int p = 0; p < kForwardPoints; ++p)
        if (active[p]) put(&values[b[p]], sum[p], gridDim.y > 1);
}

template <int D, class T>
__global__ void __launch_bounds__(kThreads)
    point_gradients_kernel(FieldArgs<T> f, size_t per_chunk, const T* grad, T* out) {
    __shared__ GaussianTile<D, T> tile;
    const size_t b = size_t(blockIdx.x) * kThreads + threadIdx.x;
    const bool active = b < f.points_count;
    T x[D], dx[D] = {};
    for (int i = 0; i < D; ++i) x[i] = active ? f.points[b * D + size_t(i)] : T(0);
    const T g = active ? grad[b] : T(0);
    const Chunk chunk = chunk_of(f, per_chunk);
    for (size_t first = chunk.begin; first < chunk.end; first += kThreads) {
        const int count = tile.load(f, first, chunk.end);
        if (!active) continue;
        for (int k = 0; k < count; ++k) {
            const T* L = &tile.cholesky[k * kTriangle<D>];
            const T* inv = &tile.inverse_diagonal[k * D];
            T v[D], unused[kTriangle<D>];
            const T q = fields::mahalanobis_rcp<D>(x, &tile.means[k * D], L, inv, v);
            fields::pair_backward<D>(g, tile.weights[k], exp_of(T(-0.5) * q), L, v, dx, unused, inv);
        }
    }
    if (active)
        for (int i = 0; i < D; ++i) put(&out[b * D + size_t(i)], dx[i], gridDim.y > 1);
}

// Thread n of block (x, chunk): Gaussian blockIdx.x * kThreads + threadIdx.x over the
// points of chunk blockIdx.y, staged in shared memory a tile at a time.
template <int D, class T>
__global__ void __launch_bounds__(kThreads)
    gaussian_gradients_kernel(FieldArgs<T> f, const T* grad, size_t chunk, FieldGradientsOut<T> out) {
    __shared__ T points[kThreads * D];
    __shared__ T grads[kThreads];
    const size_t n = size_t(blockIdx.x) * kThreads + threadIdx.x;
    const bool active = n < f.count;
    T mu[D], L[kTriangle<D>], inv[D];
    for (int i = 0; i < D; ++i) mu[i] = active ? f.means[n * D + size_t(i)] : T(0);
    for (int i = 0; i < kTriangle<D>; ++i) L[i] = active ? f.cholesky[n * kTriangle<D> + size_t(i)] : T(1);
    for (int i = 0; i < D; ++i) inv[i] = T(1) / L[fields::tri(i, i)];
    const T w = active ? f.weights[n] : T(0);
    T dx[D] = {}, dL[kTriangle<D>] = {}, dw = 0;
    const size_t begin = size_t(blockIdx.y) * chunk, end = min(begin + chunk, f.points_count);
    for (size_t first = begin; first < end; first += kThreads) {
        const int count = int(min(size_t(kThreads), end - first));
        __syncthreads();
        for (int i = threadIdx.x; i < count * D; i += kThreads) points[i] = f.points[first * D + size_t(i)];
        if (int(threadIdx.x) < count) grads[threadIdx.x] = grad[first + threadIdx.x];
        __syncthreads();
        if (!active) continue;
        for (int k = 0; k < count; ++k) {
            T v[D];
            const T q = fields::mahalanobis_rcp<D>(&points[k * D], mu, L, inv, v);
            dw += fields::pair_backward<D>(grads[k], w, exp_of(T(-0.5) * q), L, v, dx, dL, inv);
        }
    }
    if (!active) return;
    for (int i = 0; i < D; ++i) atomicAdd(&out.means[n * D + size_t(i)], -dx[i]);
    for (int i = 0; i < kTriangle<D>; ++i) atomicAdd(&out.cholesky[n * kTriangle<D> + size_t(i)], dL[i]);
    atomicAdd(&out.weights[n], dw);
}

template <class T>
void check(const FieldArgs<T>& f) {
    if (f.dims != 2 && f.dims != 3) throw Error("Gaussian fields are 2D or 3D, not " + std::to_string(f.dims) + "D");
    if (f.count == 0) throw Error("a Gaussian field needs at least one Gaussian (N = 0)");
    if (f.points_count == 0) throw Error("no points to evaluate the field at (B = 0)");
    if (!f.points || !f.means || !f.cholesky || !f.weights) throw Error("a Gaussian field's input is a null pointer");
}

unsigned grid_for(size_t items) { return unsigned((items + kThreads - 1) / kThreads); }

// Blocks that keep the GPU busy: a few per SM. Small problems (N = 1000 x B = 500 is two
// blocks of points) are split along the other axis until there are that many, each
// split at least kMinPerChunk long; splits add up with uncontended atomics.
constexpr size_t kMinPerChunk = 32;
size_t wanted_blocks() { return size_t(4 * current_device_multiprocessors()); }
size_t splits(size_t blocks, size_t length) {
    return std::clamp<size_t>(wanted_blocks() / std::max<size_t>(blocks, 1), 1,
                              (length + kMinPerChunk - 1) / kMinPerChunk);
}

template <int D, class T, int kForwardPoints>
void forward_with(const FieldArgs<T>& f, T* values, T* squared, cudaStream_t stream) {
    const unsigned point_blocks = grid_for((f.points_count + kForwardPoints - 1) / kForwardPoints);
    const size_t chunks = splits(point_blocks, f.count), per_chunk = (f.count + chunks - 1) / chunks;
    if (chunks > 1) TVLM_CUDA_CHECK(cudaMemsetAsync(values, 0, f.points_count * sizeof(T), stream));
    const dim3 grid(point_blocks, unsigned((f.count + per_chunk - 1) / per_chunk));
    forward_kernel<D, T, kForwardPoints><<<grid, kThreads, 0, stream>>>(f, per_chunk, values, squared);
}

// Four points per thread where there are points enough for a few such blocks per SM (faster
// than one or two for large batches); one where there are few, which are better spread over
// more threads.
template <int D, class T>
void forward(const FieldArgs<T>& f, T* values, T* squared, cudaStream_t stream) {
    if (f.points_count >= size_t(kThreads) * 4 * wanted_blocks()) forward_with<D, T, 4>(f, values, squared, stream);
    else forward_with<D, T, 1>(f, values, squared, stream);
}

// Zeroes the gradient buffers the backward kernels add into, in one launch: for small
// fields the backward is a few launches long, and four memsets in the stream were four more.
template <class T>
struct ZeroSpans {
    T* data[4];
    size_t count[4];
};
template <class T>
__global__ void zero_kernel(ZeroSpans<T> spans) {
    for (int s = 0; s < 4; ++s)
        for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < spans.count[s];
             i += size_t(gridDim.x) * blockDim.x)
            spans.data[s][i] = T(0);
}

template <int D, class T>
void backward(const FieldArgs<T>& f, const T* grad, const FieldGradientsOut<T>& out, cudaStream_t stream) {
    const size_t tri = size_t(D) * size_t(D + 1) / 2;
    const size_t g_chunks = splits(grid_for(f.points_count), f.count), per_g = (f.count + g_chunks - 1) / g_chunks;
    const ZeroSpans<T> spans{
        {out.means, out.cholesky, out.weights, out.points},
        {f.count * size_t(D), f.count * tri, f.count, g_chunks > 1 ? f.points_count * size_t(D) : 0}};
    const size_t longest = *std::max_element(std::begin(spans.count), std::end(spans.count));
    zero_kernel<T><<<unsigned(std::min<size_t>(grid_for(longest), wanted_blocks())), kThreads, 0, stream>>>(spans);
    point_gradients_kernel<D, T>
        <<<dim3(grid_for(f.points_count), unsigned((f.count + per_g - 1) / per_g)), kThreads, 0, stream>>>(
            f, per_g, grad, out.points);
    const size_t p_chunks = splits(grid_for(f.count), f.points_count),
                 per_p = (f.points_count + p_chunks - 1) / p_chunks;
    gaussian_gradients_kernel<D, T>
        <<<dim3(grid_for(f.count), unsigned((f.points_count + per_p - 1) / per_p)), kThreads, 0, stream>>>(f, grad,
                                                                                                           per_p, out);
}

}  // namespace

template <class T>
void gaussian_field_forward(const FieldArgs<T>& f, T* values, T* squared, cudaStream_t stream) {
    check(f);
    if (!values) throw Error("gaussian_field_forward: no output for the values");
    if (f.dims == 2) forward<2>(f, values, squared, stream);
    else forward<3>(f, values, squared, stream);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void gaussian_field_backward(const FieldArgs<T>& f, const T* grad, const FieldGradientsOut<T>& out,
                             cudaStream_t stream) {
    check(f);
    if (!grad || !out.points || !out.means || !out.cholesky || !out.weights)
        throw Error("gaussian_field_backward: a null upstream gradient or output");
    if (f.dims == 2) backward<2>(f, grad, out, stream);
    else backward<3>(f, grad, out, stream);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

template void gaussian_field_forward(const FieldArgs<float>&, float*, float*, cudaStream_t);
template void gaussian_field_forward(const FieldArgs<double>&, double*, double*, cudaStream_t);
template void gaussian_field_backward(const FieldArgs<float>&, const float*, const FieldGradientsOut<float>&,
                                      cudaStream_t);
template void gaussian_field_backward(const FieldArgs<double>&, const double*, const FieldGradientsOut<double>&,
                                      cudaStream_t);

}  // namespace tvlm
