// Tensor <-> texel copies: one thread per texel, the tensor's layout in its strides.
#include "cuda/tensors/tensor_texels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "cuda/cuda_check.h"
#include "engine/error.h"
#include "cuda/surface_texels.cuh"
#include "cuda/tensors/tensor_elements.cuh"

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

// A write's warp stores 16 texels of each of two neighbouring rows per instruction: a
// sector of an array's block-linear layout is 16 bytes of two neighbouring rows, and an
// instruction costs one L2 transaction per sector it touches, so a warp storing 32 texels
// of one row wrote half sectors, slower than storing over row pairs. Lane = 16 h + i: row h of the pair, texels i, i + 16, ... of the run.
// Each thread writes kWriteRun texels 16 apart: every load and store instruction of a warp
// stays two contiguous runs (a thread of one texel was latency-bound, 26 cycles per
// instruction at 1024^2; four adjacent texels per thread made every warp access strided
// and was 3x slower still), and a thread has four loads in flight. A block of 32 x 8
// threads covers 128 texels x 8 rows: warps 2p and 2p + 1 take the two 64-texel halves of
// row pair p.
constexpr uint32_t kWriteRun = 4, kPairRun = 16 * kWriteRun;

// Byte k (0..3) of a word, as a float.
__device__ inline float byte_of(uint32_t word, uint32_t k) { return float((word >> (8 * k)) & 0xFFu); }

// Word `word` of a run of uint8 texels whose rows are 4-byte aligned with stride_x 1, one
// 32-bit word per channel (4 adjacent texels; a warp load moves 64 bytes of each of two
// rows, where one-byte loads moved 32 and held the copy to a fraction of the bandwidth). A 3-channel
// tensor's alpha word is opaque.
__device__ void load_row_words(const TensorView& t, const unsigned char* row, uint32_t x_first, uint32_t word,
                               uint32_t words[4]) {
#pragma unroll
    for (uint32_t ch = 0; ch < 4; ++ch)
        words[ch] = ch < t.channels ? __ldg(reinterpret_cast<const uint32_t*>(row + ch * t.stride_c + x_first) + word)
                                    : 0xFFFFFFFFu;
}

// Texel `texel` (0..15) of the 4 x 4 words that lanes first .. first + 3 hold: bytes of
// the word of lane first + texel / 4, passed around the warp.
__device__ float4 word_texel(const uint32_t words[4], uint32_t first, uint32_t texel) {
    float value[4];
#pragma unroll
    for (uint32_t ch = 0; ch < 4; ++ch)
        value[ch] = byte_of(__shfl_sync(0xFFFFFFFFu, words[ch], first + texel / 4), texel % 4);
    return make_float4(value[0], value[1], value[2], value[3]);
}

template <SurfaceTexel T, bool kAlignedBytes>
__global__ void write_kernel(const __grid_constant__ Copy c) {
    const uint32_t lane = threadIdx.x, h = lane / 16, i = lane % 16;
    const uint32_t x_first = c.block.x + blockIdx.x * blockDim.x * kWriteRun + (threadIdx.y % 2) * kPairRun;
    const uint32_t y = c.block.y + blockIdx.y * blockDim.y + (threadIdx.y / 2) * 2 + h, b = blockIdx.z;
    const uint32_t x_end = c.block.x + c.block.width, y_end = c.block.y + c.block.height;
    const bool row_inside = y < y_end;
    const TensorView& t = c.tensor;
    const void* data = image_data(t, c.sources, b);
    const bool byte_tensor = t.dtype == TensorDtype::u8;
    if (kAlignedBytes && x_first + kPairRun <= x_end) {  // uniform over the warp: it shuffles
        uint32_t words[4];
        const uint32_t y_read = min(y, y_end - 1);  // a row past the end is read, not written
        load_row_words(t, static_cast<const unsigned char*>(data) + int64_t(y_read) * t.stride_y, x_first, i, words);
#pragma unroll
        for (uint32_t k = 0; k < kWriteRun; ++k) {
            const float4 v = word_texel(words, 16 * h + 4 * k, i);  // texel 16 k + i: word 4 k + i / 4 of the row
            if (row_inside)
                store<T>(c.level, x_first + 16 * k + i, y, c.block.first_layer + b, c.layered,
                         to_texel(v, T == SurfaceTexel::uchar4, true));
        }
        return;
    }
    if (!row_inside) return;
    const float alpha = byte_tensor ? 255.0f : 1.0f;
    float4 v[kWriteRun];
#pragma unroll
    for (uint32_t k = 0; k < kWriteRun; ++k) {
        const uint32_t x = x_first + 16 * k + i;
        if (x >= x_end) break;
        const int64_t e = int64_t(y) * t.stride_y + int64_t(x) * t.stride_x;
        v[k] = make_float4(load_element(data, t.dtype, e), load_element(data, t.dtype, e + t.stride_c),
                           load_element(data, t.dtype, e + 2 * t.stride_c),
                           t.channels == 4 ? load_element(data, t.dtype, e + 3 * t.stride_c) : alpha);
    }
#pragma unroll
    for (uint32_t k = 0; k < kWriteRun; ++k) {
        const uint32_t x = x_first + 16 * k + i;
        if (x >= x_end) break;
        store<T>(c.level, x, y, c.block.first_layer + b, c.layered,
                 to_texel(v[k], T == SurfaceTexel::uchar4, byte_tensor));
    }
}

// write_kernel for a uint8 RGB(A) image into RGBA8 level 0 that also stores level 1 (its
// 2:1 box, both sides even) from the same loads, so the texture's own mip pass for a
// two-level chain is not needed: a warp takes a row pair. Level-1 bytes are the engine's
// box arithmetic for bytes, floor(sum / 4 + 1/2).
__global__ void write_halving_kernel(const __grid_constant__ Copy c, cudaSurfaceObject_t next, bool aligned) {
    const uint32_t lane = threadIdx.x, x_first = blockIdx.x * blockDim.x * kWriteRun;
    const uint32_t y_next = blockIdx.y * blockDim.y + threadIdx.y, b = blockIdx.z;
    if (2 * y_next >= c.block.height) return;  // whole warps: a warp is one row pair
    const TensorView& t = c.tensor;
    const auto* data = static_cast<const unsigned char*>(image_data(t, c.sources, b));
    const unsigned char* rows[2] = {data + int64_t(2 * y_next) * t.stride_y,
                                    data + int64_t(2 * y_next + 1) * t.stride_y};
    const uint32_t layer = c.block.first_layer + b;
    const auto byte_at = [&](uint32_t r, uint32_t ch, uint32_t x) {
        return ch < t.channels ? float(rows[r][ch * t.stride_c + int64_t(x) * t.stride_x]) : 255.0f;
    };
    if (aligned && x_first + kWriteRun * blockDim.x <= c.block.width) {
        uint32_t words[2][4];  // lane l: texels 4 l .. 4 l + 3 of each row
#pragma unroll
        for (uint32_t r = 0; r < 2; ++r) load_row_words(t, rows[r], x_first, lane, words[r]);
        // Level 0 in full sectors (see kWriteRun): lane 16 h + j first gathers words j and
        // 16 + j of row h (one exchange with lane ^ 16), then store m writes texels 16 m ..
        // 16 m + 15 of both rows.
        const uint32_t h = lane / 16, i = lane % 16;
        uint32_t low[4], high[4];  // words lane % 16 and 16 + lane % 16 of row h
#pragma unroll
        for (uint32_t ch = 0; ch < 4; ++ch) {
            const uint32_t got = __shfl_xor_sync(0xFFFFFFFFu, h ? words[0][ch] : words[1][ch], 16);
            low[ch] = h ? got : words[0][ch];
            high[ch] = h ? words[1][ch] : got;
        }
#pragma unroll
        for (uint32_t m = 0; m < 2 * kWriteRun; ++m)
            store<SurfaceTexel::uchar4>(c.level, x_first + 16 * m + i, 2 * y_next + h, layer, c.layered,
                                        word_texel(m < kWriteRun ? low : high, 16 * h + 4 * (m % kWriteRun), i));
#pragma unroll
        for (uint32_t j = 0; j < 2; ++j) {  // this lane's four columns make level-1 texels 2 * lane + j of the run
            float v[4];
#pragma unroll
            for (uint32_t ch = 0; ch < 4; ++ch)
                v[ch] = floorf((byte_of(words[0][ch], 2 * j) + byte_of(words[0][ch], 2 * j + 1) +
                                byte_of(words[1][ch], 2 * j) + byte_of(words[1][ch], 2 * j + 1)) *
                                   0.25f +
                               0.5f);
            store<SurfaceTexel::uchar4>(next, x_first / 2 + 2 * lane + j, y_next, layer, c.layered,
                                        make_float4(v[0], v[1], v[2], v[3]));
        }
        return;
    }
    for (uint32_t k = 0; k < kWriteRun; ++k) {  // the row's tail (or unaligned rows), a byte at a time
        const uint32_t x = x_first + k * blockDim.x + lane;
        if (x < c.block.width)
            for (uint32_t r = 0; r < 2; ++r)
                store<SurfaceTexel::uchar4>(
                    c.level, x, 2 * y_next + r, layer, c.layered,
                    make_float4(byte_at(r, 0, x), byte_at(r, 1, x), byte_at(r, 2, x), byte_at(r, 3, x)));
        const uint32_t x_next = x_first / 2 + k * blockDim.x + lane;
        if (k < kWriteRun / 2 && 2 * x_next < c.block.width) {
            float v[4];
            for (uint32_t ch = 0; ch < 4; ++ch)
                v[ch] = floorf((byte_at(0, ch, 2 * x_next) + byte_at(0, ch, 2 * x_next + 1) +
                                byte_at(1, ch, 2 * x_next) + byte_at(1, ch, 2 * x_next + 1)) *
                                   0.25f +
                               0.5f);
            store<SurfaceTexel::uchar4>(next, x_next, y_next, layer, c.layered, make_float4(v[0], v[1], v[2], v[3]));
        }
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

// Whether a write may take load_row_words: uint8 RGB or RGBA and the block's first column
// on a word boundary of rows that are.
bool word_rows(const Copy& c) {
    const TensorView& t = c.tensor;
    return t.dtype == TensorDtype::u8 && t.channels >= 3 && c.block.x % 4 == 0 &&
           rows_aligned(t, c.sources, c.block.layers, 4);
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

template <SurfaceTexel T>
struct Write {
    static void launch(dim3 g, dim3 t, const Copy& c, cudaStream_t s) {
        if (word_rows(c)) write_kernel<T, true><<<g, t, 0, s>>>(c);
        else write_kernel<T, false><<<g, t, 0, s>>>(c);
    }
};
template <SurfaceTexel T>
struct Read {
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

bool rows_aligned(const TensorView& view, const ImageList& sources, uint32_t layers, uint32_t bytes) {
    const auto aligned = [&](int64_t elements) { return elements * element_bytes(view.dtype) % bytes == 0; };
    if (view.stride_x != 1 || !aligned(view.stride_y) || !aligned(view.stride_c) ||
        (layers > 1 && !sources.count && !aligned(view.stride_b)))
        return false;
    const auto at_boundary = [&](const void* p) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; };
    if (!sources.count) return at_boundary(view.data);
    for (uint32_t i = 0; i < sources.count; ++i)
        if (!at_boundary(sources.images[i])) return false;
    return true;
}

bool writes_with_next_level(const TensorView& tensor, SurfaceTexel texel, const TexelBlock& block) {
    return tensor.dtype == TensorDtype::u8 && tensor.channels >= 3 && texel == SurfaceTexel::uchar4 && block.x == 0 &&
           block.y == 0 && block.width % 2 == 0 && block.height % 2 == 0 && block.width && block.height;
}

void write_texels_and_next_level(const TensorView& tensor, cudaSurfaceObject_t level, cudaSurfaceObject_t next_level,
                                 bool layered, SurfaceTexel texel, const TexelBlock& block, cudaStream_t stream,
                                 const ImageList& sources) {
    if (!writes_with_next_level(tensor, texel, block))
        throw Error("a write with level 1 takes a whole uint8 RGB(A) image of even sides into an RGBA8 texture");
    if (sources.count && sources.count != block.layers)
        throw Error("a write of " + std::to_string(block.layers) + " layers from a list of " +
                    std::to_string(sources.count) + " images: one image per layer");
    if (block.layers > 65535) throw Error("a write covers at most 65535 layers per call: split the batch");
    const Copy c{tensor, level, layered, block, sources};
    const dim3 threads(32, 8);
    const dim3 grid((block.width + threads.x * kWriteRun - 1) / (threads.x * kWriteRun),
                    (block.height / 2 + threads.y - 1) / threads.y, block.layers);
    write_halving_kernel<<<grid, threads, 0, stream>>>(c, next_level, word_rows(c));
    TVLM_CUDA_CHECK(cudaGetLastError());
}

void read_texels(cudaSurfaceObject_t level, bool layered, SurfaceTexel texel, const TexelBlock& block,
                 const TensorView& tensor, cudaStream_t stream) {
    launch<Read>({tensor, level, layered, block, {}}, texel, stream, 1);
}

}  // namespace tvlm
