// Patch grids as points (glimpse.sample_patches in one call): the points of every patch's
// P x P grid from its metadata row, and the adjoint that sums the points' gradients back
// into the rows. The arithmetic is glimpse.py's torch expression, rounded step by step as
// torch rounds it (no fused multiply-add), so the fused path samples where the composite
// one does, bit for bit.
#include <string>

#include "cuda/cuda_check.h"
#include "engine/error.h"
#include "cuda/differentiable/point_sampling_grad.h"

namespace tvlm {

namespace {

constexpr uint32_t kGridBlock = 256;

__device__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ double div_rn(double a, double b) { return __ddiv_rn(a, b); }

// ((i + 0.5) / P - 0.5): sample i's offset across its patch, in units of the patch's size,
// rounded as torch rounds it: a tensor divided by a scalar is multiplied by the scalar's
// reciprocal (computed in T).
template <class T>
__device__ T grid_step(uint32_t i, uint32_t p) {
    return add_rn(mul_rn(add_rn(T(i), T(0.5)), div_rn(T(1), T(p))), T(-0.5));
}

template <class T>
__global__ void grid_points_kernel(const T* meta, PatchGrid grid, size_t count, T* uv, T* lod, int32_t* layer) {
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= count) return;
    const uint32_t per_patch = grid.patch_size * grid.patch_size;
    const size_t row = i / per_patch;  // b * patches + n
    const uint32_t within = uint32_t(i - row * per_patch), k = within / grid.patch_size,
                   j = within - k * grid.patch_size;
    const T* m = meta + row * 5;  // cu, cv, su, sv, lod
    uv[2 * i] = add_rn(m[0], mul_rn(grid_step<T>(j, grid.patch_size), m[2]));
    uv[2 * i + 1] = add_rn(m[1], mul_rn(grid_step<T>(k, grid.patch_size), m[3]));
    lod[i] = m[4];
    layer[i] = int32_t(row / grid.patches);
}

// A block per metadata row: the sums over its P x P points of d/du, d/du * step_j, d/dv,
// d/dv * step_k and d/dlod.
template <class T>
__global__ void grid_adjoint_kernel(const T* grad_uv, const T* grad_lod, PatchGrid grid, T* grad_meta) {
    __shared__ T partial[5][kGridBlock];
    const size_t row = blockIdx.x;
    const uint32_t per_patch = grid.patch_size * grid.patch_size;
    T sum[5] = {0, 0, 0, 0, 0};
    for (uint32_t s = threadIdx.x; s < per_patch; s += blockDim.x) {
        const size_t i = row * per_patch + s;
        const uint32_t k = s / grid.patch_size, j = s - k * grid.patch_size;
        const T gu = grad_uv[2 * i], gv = grad_uv[2 * i + 1];
        sum[0] += gu;
        sum[1] += gv;
        sum[2] += gu * grid_step<T>(j, grid.patch_size);
        sum[3] += gv * grid_step<T>(k, grid.patch_size);
        sum[4] += grad_lod[i];
    }
    for (uint32_t f = 0; f < 5; ++f) partial[f][threadIdx.x] = sum[f];
    for (uint32_t half = blockDim.x / 2; half; half /= 2) {
        __syncthreads();
        if (threadIdx.x < half)
            for (uint32_t f = 0; f < 5; ++f) partial[f][threadIdx.x] += partial[f][threadIdx.x + half];
    }
    __syncthreads();  // the last step's sums, written by thread 0, are read by threads 0..4
    if (threadIdx.x < 5) grad_meta[row * 5 + threadIdx.x] = partial[threadIdx.x][0];
}

// A thread per value written: reads are P * P apart within a patch, writes contiguous.
template <class T>
__global__ void grad_channels_last_kernel(const T* planar, size_t values, uint32_t channels, uint32_t per_patch,
                                          T* last) {
    const size_t o = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (o >= values) return;
    const size_t point = o / channels, row = point / per_patch;
    const size_t c = o - point * channels, s = point - row * per_patch;
    last[o] = planar[(row * channels + c) * per_patch + s];
}

void check_grid(const PatchGrid& grid) {
    if (!grid.images || !grid.patches || !grid.patch_size)
        throw Error("a patch grid needs at least one image, one patch and a patch size of at least 1");
    if (grid.patch_size > 1024)
        throw Error("patches are at most 1024 samples a side, not " + std::to_string(grid.patch_size));
}

}  // namespace

template <class T>
void patch_grid_points(const T* meta, const PatchGrid& grid, T* uv, T* lod, int32_t* layer, cudaStream_t stream) {
    check_grid(grid);
    if (!meta || !uv || !lod || !layer) throw Error("a patch grid's points need its metadata and three outputs");
    const size_t blocks = (grid.points() + kGridBlock - 1) / kGridBlock;
    if (blocks > 0x7fffffffu) throw Error("too many patch samples for one launch: split the batch");
    grid_points_kernel<T><<<unsigned(blocks), kGridBlock, 0, stream>>>(meta, grid, grid.points(), uv, lod, layer);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void patch_grid_adjoint(const T* grad_uv, const T* grad_lod, const PatchGrid& grid, T* grad_meta, cudaStream_t stream) {
    check_grid(grid);
    if (!grad_uv || !grad_lod || !grad_meta)
        throw Error("a patch grid's adjoint needs the points' gradients and an output");
    const size_t rows = size_t(grid.images) * grid.patches;
    if (rows > 0x7fffffffu) throw Error("too many patches for one launch: split the batch");
    grid_adjoint_kernel<T><<<unsigned(rows), kGridBlock, 0, stream>>>(grad_uv, grad_lod, grid, grad_meta);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void patch_grad_channels_last(const T* planar, const PatchGrid& grid, uint32_t channels, T* last, cudaStream_t stream) {
    check_grid(grid);
    if (!planar || !last || !channels) throw Error("a patch gradient's transpose needs its input, channels and output");
    const size_t values = grid.points() * channels;
    const size_t blocks = (values + kGridBlock - 1) / kGridBlock;
    if (blocks > 0x7fffffffu) throw Error("too many patch samples for one launch: split the batch");
    grad_channels_last_kernel<T><<<unsigned(blocks), kGridBlock, 0, stream>>>(planar, values, channels,
                                                                              grid.patch_size * grid.patch_size, last);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

template void patch_grid_points<float>(const float*, const PatchGrid&, float*, float*, int32_t*, cudaStream_t);
template void patch_grid_points<double>(const double*, const PatchGrid&, double*, double*, int32_t*, cudaStream_t);
template void patch_grid_adjoint<float>(const float*, const float*, const PatchGrid&, float*, cudaStream_t);
template void patch_grid_adjoint<double>(const double*, const double*, const PatchGrid&, double*, cudaStream_t);

template void patch_grad_channels_last<float>(const float*, const PatchGrid&, uint32_t, float*, cudaStream_t);
template void patch_grad_channels_last<double>(const double*, const PatchGrid&, uint32_t, double*, cudaStream_t);

}  // namespace tvlm
