// Tensor <-> texel copies: one thread per texel, the tensor's layout in its strides.
#include "tensor_texels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "cuda_check.h"
#include "error.h"
#include "surface_texels.cuh"
#include "tensor_elements.cuh"

namespace tvlm {

namespace {

// A float in [0, 1] as the byte the engine stores: clamp, then floor(v * 255 + 0.5).
__device__ float unorm8(float v) { return floorf(fminf(fmaxf(v, 0.0f), 1.0f) * 255.0f + 0.5f); }

// Texel values as 8-bit textures store them (bytes) or float textures (floats).
__device__ float4 to_texel(float4 v, bool byte_texture, bool byte_tensor) {
    if (byte_texture == byte_tensor) return v;
    if (byte_texture) return make_float4(unorm8(v.x), unorm8(v.y), unorm8(v.z), unorm8(v.w));
    const float s = 1.0f / 255.0f;
    return make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
}

__device__ float4 from_texel(float4 t, bool byte_texture, bool byte_tensor) {
    if (byte_texture == byte_tensor) return t;
    if (byte_tensor) return make_float4(unorm8(t.x), unorm8(t.y), unorm8(t.z), unorm8(t.w));
    const float s = 1.0f / 255.0f;
    return make_float4(t.x * s, t.y * s, t.z * s, t.w * s);
}

struct Copy {
    TensorView tensor;
    cudaSurfaceObject_t level;
    bool layered;
    TexelBlock block;
    ImageList sources;
};

__device__ int64_t element(const TensorView& t, uint32_t b, uint32_t y, uint32_t x) {
    return int64_t(b) * t.stride_b + int64_t(y) * t.stride_y + int64_t(x) * t.stride_x;
}

// The texel (x, y) of tensor image b this thread copies; false past the block's edge.
__device__ bool thread_texel(const Copy& c, uint32_t& x, uint32_t& y, uint32_t& b) {
    x = c.block.x + blockIdx.x * blockDim.x + threadIdx.x;
    y = c.block.y + blockIdx.y * blockDim.y + threadIdx.y;
    b = blockIdx.z;
    return x < c.block.x + c.block.width && y < c.block.y + c.block.height;
}

// Texels per thread of a write, a warp's width apart along x: each load and store
// instruction of a warp stays one contiguous run (a thread of one texel was latency-bound,
// 26 cycles per instruction at 1024^2; four adjacent texels per thread made every warp
// access strided and was 3x slower still), and a thread has four loads in flight.
constexpr uint32_t kWriteRun = 4;

template <SurfaceTexel T>
__global__ void write_kernel(const __grid_constant__ Copy c) {
    const uint32_t x0 = c.block.x + blockIdx.x * blockDim.x * kWriteRun + threadIdx.x;
    const uint32_t y = c.block.y + blockIdx.y * blockDim.y + threadIdx.y, b = blockIdx.z;
    const uint32_t x_end = c.block.x + c.block.width;
    if (y >= c.block.y + c.block.height) return;
    const TensorView& t = c.tensor;
    const void* data = image_data(t, c.sources, b);
    const bool byte_tensor = t.dtype == TensorDtype::u8;
    const float alpha = byte_tensor ? 255.0f : 1.0f;
    float4 v[kWriteRun];
#pragma unroll
    for (uint32_t k = 0; k < kWriteRun; ++k) {
        const uint32_t x = x0 + k * blockDim.x;
        if (x >= x_end) break;
        const int64_t e = int64_t(y) * t.stride_y + int64_t(x) * t.stride_x;
        v[k] = make_float4(load_element(data, t.dtype, e), load_element(data, t.dtype, e + t.stride_c),
                           load_element(data, t.dtype, e + 2 * t.stride_c),
                           t.channels == 4 ? load_element(data, t.dtype, e + 3 * t.stride_c) : alpha);
    }
#pragma unroll
    for (uint32_t k = 0; k < kWriteRun; ++k) {
        const uint32_t x = x0 + k * blockDim.x;
        if (x >= x_end) break;
        store<T>(c.level, x, y, c.block.first_layer + b, c.layered,
                 to_texel(v[k], T == SurfaceTexel::uchar4, byte_tensor));
    }
}

template <SurfaceTexel T>
__global__ void read_kernel(Copy c) {
    uint32_t x, y, b;
    if (!thread_texel(c, x, y, b)) return;
    const TensorView& t = c.tensor;
    const float4 texel = load<T>(c.level, x, y, c.block.first_layer + b, c.layered);
    const float4 v = from_texel(texel, T == SurfaceTexel::uchar4, t.dtype == TensorDtype::u8);
    const int64_t e = element(t, b, y, x);
    store_element(t.data, t.dtype, e, v.x);
    store_element(t.data, t.dtype, e + t.stride_c, v.y);
    store_element(t.data, t.dtype, e + 2 * t.stride_c, v.z);
    if (t.channels == 4) store_element(t.data, t.dtype, e + 3 * t.stride_c, v.w);
}

template <template <SurfaceTexel> class Kernel>
void launch(const Copy& c, SurfaceTexel texel, cudaStream_t stream, uint32_t texels_per_thread) {
    if (c.block.width == 0 || c.block.height == 0 || c.block.layers == 0) return;
    const dim3 threads(32, 8);
    const uint32_t row = threads.x * texels_per_thread;
    const dim3 grid((c.block.width + row - 1) / row, (c.block.height + threads.y - 1) / threads.y, c.block.layers);
    switch (texel) {
        case SurfaceTexel::uchar4: Kernel<SurfaceTexel::uchar4>::launch(grid, threads, c, stream); break;
        case SurfaceTexel::half4: Kernel<SurfaceTexel::half4>::launch(grid, threads, c, stream); break;
        case SurfaceTexel::float4: Kernel<SurfaceTexel::float4>::launch(grid, threads, c, stream); break;
        case SurfaceTexel::float1: throw Error("tensors are copied to and from RGBA textures, not one-channel ones");
    }
    TVLM_CUDA_CHECK(cudaGetLastError());
}

template <SurfaceTexel T> struct Write {
    static void launch(dim3 g, dim3 t, const Copy& c, cudaStream_t s) { write_kernel<T><<<g, t, 0, s>>>(c); }
};
template <SurfaceTexel T> struct Read {
    static void launch(dim3 g, dim3 t, const Copy& c, cudaStream_t s) { read_kernel<T><<<g, t, 0, s>>>(c); }
};

}  // namespace

void write_texels(const TensorView& tensor, cudaSurfaceObject_t level, bool layered, SurfaceTexel texel,
                  const TexelBlock& block, cudaStream_t stream, const ImageList& sources) {
    if (sources.count && sources.count != block.layers)
        throw Error("a write of " + std::to_string(block.layers) + " layers from a list of " +
                    std::to_string(sources.count) + " images: one image per layer");
    if (block.layers > 65535) throw Error("a write covers at most 65535 layers per call: split the batch");
    launch<Write>({tensor, level, layered, block, sources}, texel, stream, kWriteRun);
}

void read_texels(cudaSurfaceObject_t level, bool layered, SurfaceTexel texel, const TexelBlock& block,
                 const TensorView& tensor, cudaStream_t stream) {
    launch<Read>({tensor, level, layered, block, {}}, texel, stream, 1);
}

}  // namespace tvlm
