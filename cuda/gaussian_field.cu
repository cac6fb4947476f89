#include "gaussian_field.h"

#include <algorithm>
#include <string>

#include "cuda_check.h"
#include "error.h"
#include "fields/gaussian_pair.h"

namespace tvlm {

namespace {

using fields::kTriangle;
constexpr int kThreads = 256;

__device__ inline float exp_of(float x) { return __expf(x); }
__device__ inline double exp_of(double x) { return exp(x); }

// A tile of kThreads Gaussians staged in shared memory by the whole block.
template <int D, class T>
struct GaussianTile {
    T means[kThreads * D];
    T cholesky[kThreads * kTriangle<D>];
    T weights[kThreads];

    __device__ int load(const FieldArgs<T>& f, size_t first) {
        const int count = int(min(size_t(kThreads), f.count - first));
        __syncthreads();  // the previous tile is no longer read
        for (int i = threadIdx.x; i < count * D; i += kThreads) means[i] = f.means[first * D + size_t(i)];
        for (int i = threadIdx.x; i < count * kTriangle<D>; i += kThreads)
            cholesky[i] = f.cholesky[first * kTriangle<D> + size_t(i)];
        if (int(threadIdx.x) < count) weights[threadIdx.x] = f.weights[first + threadIdx.x];
        __syncthreads();
        return count;
    }
};

template <int D, class T>
__global__ void __launch_bounds__(kThreads) forward_kernel(FieldArgs<T> f, T* values, T* squared) {
    __shared__ GaussianTile<D, T> tile;
    const size_t b = size_t(blockIdx.x) * kThreads + threadIdx.x;
    const bool active = b < f.points_count;
    T x[D];
    for (int i = 0; i < D; ++i) x[i] = active ? f.points[b * D + size_t(i)] : T(0);
    T sum = 0;
    for (size_t first = 0; first < f.count; first += kThreads) {
        const int count = tile.load(f, first);
        if (!active) continue;
        for (int k = 0; k < count; ++k) {
            T v[D];
            const T q = fields::mahalanobis<D>(x, &tile.means[k * D], &tile.cholesky[k * kTriangle<D>], v);
            sum += tile.weights[k] * exp_of(T(-0.5) * q);
            if (squared) squared[b * f.count + first + size_t(k)] = q;
        }
    }
    if (active) values[b] = sum;
}

template <int D, class T>
__global__ void __launch_bounds__(kThreads) point_gradients_kernel(FieldArgs<T> f, const T* grad, T* out) {
    __shared__ GaussianTile<D, T> tile;
    const size_t b = size_t(blockIdx.x) * kThreads + threadIdx.x;
    const bool active = b < f.points_count;
    T x[D], dx[D] = {};
    for (int i = 0; i < D; ++i) x[i] = active ? f.points[b * D + size_t(i)] : T(0);
    const T g = active ? grad[b] : T(0);
    for (size_t first = 0; first < f.count; first += kThreads) {
        const int count = tile.load(f, first);
        if (!active) continue;
        for (int k = 0; k < count; ++k) {
            const T* L = &tile.cholesky[k * kTriangle<D>];
            T v[D], unused[kTriangle<D>];
            const T q = fields::mahalanobis<D>(x, &tile.means[k * D], L, v);
            fields::pair_backward<D>(g, tile.weights[k], exp_of(T(-0.5) * q), L, v, dx, unused);
        }
    }
    if (active)
        for (int i = 0; i < D; ++i) out[b * D + size_t(i)] = dx[i];
}

// Thread n of block (x, chunk): Gaussian blockIdx.x * kThreads + threadIdx.x over the
// points of chunk blockIdx.y, staged in shared memory a tile at a time.
template <int D, class T>
__global__ void __launch_bounds__(kThreads) gaussian_gradients_kernel(FieldArgs<T> f, const T* grad, size_t chunk,
                                                                      FieldGradientsOut<T> out) {
    __shared__ T points[kThreads * D];
    __shared__ T grads[kThreads];
    const size_t n = size_t(blockIdx.x) * kThreads + threadIdx.x;
    const bool active = n < f.count;
    T mu[D], L[kTriangle<D>];
    for (int i = 0; i < D; ++i) mu[i] = active ? f.means[n * D + size_t(i)] : T(0);
    for (int i = 0; i < kTriangle<D>; ++i) L[i] = active ? f.cholesky[n * kTriangle<D> + size_t(i)] : T(i == 0 || i == 2 || i == 5);
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
            const T q = fields::mahalanobis<D>(&points[k * D], mu, L, v);
            dw += fields::pair_backward<D>(grads[k], w, exp_of(T(-0.5) * q), L, v, dx, dL);
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

}  // namespace

template <class T>
void gaussian_field_forward(const FieldArgs<T>& f, T* values, T* squared, cudaStream_t stream) {
    check(f);
    if (!values) throw Error("gaussian_field_forward: no output for the values");
    if (f.dims == 2) forward_kernel<2, T><<<grid_for(f.points_count), kThreads, 0, stream>>>(f, values, squared);
    else forward_kernel<3, T><<<grid_for(f.points_count), kThreads, 0, stream>>>(f, values, squared);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void gaussian_field_backward(const FieldArgs<T>& f, const T* grad, const FieldGradientsOut<T>& out, cudaStream_t stream) {
    check(f);
    if (!grad || !out.points || !out.means || !out.cholesky || !out.weights)
        throw Error("gaussian_field_backward: a null upstream gradient or output");
    const size_t tri = size_t(f.dims) * size_t(f.dims + 1) / 2;
    TVLM_CUDA_CHECK(cudaMemsetAsync(out.means, 0, f.count * size_t(f.dims) * sizeof(T), stream));
    TVLM_CUDA_CHECK(cudaMemsetAsync(out.cholesky, 0, f.count * tri * sizeof(T), stream));
    TVLM_CUDA_CHECK(cudaMemsetAsync(out.weights, 0, f.count * sizeof(T), stream));
    // Enough chunks of points to fill the GPU (~64K threads), each at least 64 points.
    const size_t gaussian_blocks = grid_for(f.count);
    const size_t chunks = std::clamp<size_t>(256 / gaussian_blocks, 1, (f.points_count + 63) / 64);
    const size_t chunk = (f.points_count + chunks - 1) / chunks;
    const dim3 grid(unsigned(gaussian_blocks), unsigned((f.points_count + chunk - 1) / chunk));
    if (f.dims == 2) {
        point_gradients_kernel<2, T><<<grid_for(f.points_count), kThreads, 0, stream>>>(f, grad, out.points);
        gaussian_gradients_kernel<2, T><<<grid, kThreads, 0, stream>>>(f, grad, chunk, out);
    } else {
        point_gradients_kernel<3, T><<<grid_for(f.points_count), kThreads, 0, stream>>>(f, grad, out.points);
        gaussian_gradients_kernel<3, T><<<grid, kThreads, 0, stream>>>(f, grad, chunk, out);
    }
    TVLM_CUDA_CHECK(cudaGetLastError());
}

template void gaussian_field_forward(const FieldArgs<float>&, float*, float*, cudaStream_t);
template void gaussian_field_forward(const FieldArgs<double>&, double*, double*, cudaStream_t);
template void gaussian_field_backward(const FieldArgs<float>&, const float*, const FieldGradientsOut<float>&, cudaStream_t);
template void gaussian_field_backward(const FieldArgs<double>&, const double*, const FieldGradientsOut<double>&,
                                      cudaStream_t);

}  // namespace tvlm
