// Box mips over strided tensors (tensor_mips.h): box_mips_kernel's tile scheme with one
// channel per block, so every load and store is a plain coalesced global access (a warp
// reads two rows of 64 elements and writes a row of 32).
#include "cuda/mips/tensor_mips.h"

#include <cuda_fp16.h>

#include <string>
#include <type_traits>

#include "cuda/mips/box_arithmetic.cuh"
#include "cuda/cuda_check.h"
#include "engine/error.h"
#include "cuda/surface_texels.cuh"
#include "cuda/tensors/tensor_elements.cuh"

namespace tvlm {

namespace {

using namespace box;
constexpr uint32_t kTile = TVLM_BOX_TILE;

// Elements as the average sees them (bytes 0..255, else floats) and back; stored values
// are already rounded to the element type by Filter, so the casts are exact.
template <class E>
struct Element;
// raw(): the bits a texel channel of the matching texture format holds; one: alpha 1.
template <>
struct Element<uint8_t> {
    __device__ static float load(const uint8_t* p) { return __ldg(p); }
    __device__ static void store(uint8_t* p, float v) { *p = static_cast<uint8_t>(v); }
    __device__ static unsigned char raw(float v) { return static_cast<unsigned char>(v); }
    static constexpr float one = 255.0f;
};
template <>
struct Element<__half> {
    __device__ static float load(const __half* p) { return __half2float(__ldg(p)); }
    __device__ static void store(__half* p, float v) { *p = __float2half_rn(v); }
    __device__ static unsigned short raw(float v) { return __half_as_ushort(__float2half_rn(v)); }
    static constexpr float one = 1.0f;
};
template <>
struct Element<float> {
    __device__ static float load(const float* p) { return __ldg(p); }
    __device__ static void store(float* p, float v) { *p = v; }
    __device__ static float raw(float v) { return v; }
    static constexpr float one = 1.0f;
};

// Channel c of texel (x, y) of image b in the surface of level a+step, if there is one.
template <class E>
__device__ void store_surface(const TensorMipsSurfaces& s, uint32_t step, uint32_t b, uint32_t c, uint32_t x,
                              uint32_t y, float v) {
    const cudaSurfaceObject_t surface = s.level[step];
    if (!surface) return;
    const uint32_t texel = x * 4 * sizeof(E), layer = s.first_layer + b;
    write_word(surface, Element<E>::raw(v), texel + c * sizeof(E), y, layer, s.layered);
    if (s.opaque_alpha && c == 2)
        write_word(surface, Element<E>::raw(Element<E>::one), texel + 3 * sizeof(E), y, layer, s.layered);
}

// Plane (b, c) of a view, addressed by (x, y).
template <class E>
struct Plane {
    E* base;
    int64_t stride_x, stride_y;
    __device__ Plane(const TensorView& v, uint32_t b, uint32_t c)
        : base(static_cast<E*>(v.data) + b * v.stride_b + c * v.stride_c), stride_x(v.stride_x), stride_y(v.stride_y) {}
    __device__ Plane(E* image, const TensorView& v, uint32_t c)
        : base(image + c * v.stride_c), stride_x(v.stride_x), stride_y(v.stride_y) {}
    __device__ E* at(uint32_t x, uint32_t y) const { return base + y * stride_y + x * stride_x; }
    __device__ float load(uint32_t x, uint32_t y) const { return Element<std::remove_const_t<E>>::load(at(x, y)); }
    __device__ void store(uint32_t x, uint32_t y, float v) const { Element<E>::store(at(x, y), v); }
};

// The view of level a+step (a switch: indexing the parameter array with a run-time value
// would copy the whole parameter block to local memory).
__device__ const TensorView& level_view(const TensorMipsPass& p, uint32_t step) {
    switch (step) {
        case 2: return p.dst[1];
        case 3: return p.dst[2];
        case 4: return p.dst[3];
        case 5: return p.dst[4];
        case 6: return p.dst[5];
        default: return p.dst[0];
    }
}

// Texel (x, y) of level a+1 from its taps over level a (any ratio), as first_level_texel.
template <class E>
__device__ float box_value(const Filter& filter, const Plane<E>& src, uint32_t x, uint32_t y, uint32_t width,
                           uint32_t height) {
    const Taps tx = taps(x, width), ty = taps(y, height);
    double n = 0;
    for (uint32_t b = 0; b < ty.count; ++b) {
        double row = 0;
        for (uint32_t a = 0; a < tx.count; ++a)
            row += static_cast<double>(tx.weight[a]) * filter.averaged(src.load(tx.first + a, ty.first + b), 0);
        n += static_cast<double>(ty.weight[b]) * row;
    }
    return filter.stored_value(n, static_cast<double>(tx.sum) * ty.sum, 0);
}

// Byte k of the eight in `w`.
__device__ inline float byte_of(uint2 w, uint32_t k) {
    return static_cast<float>(((k < 4 ? w.x : w.y) >> (8 * (k % 4))) & 0xFFu);
}

// first_tile for 2:1 steps over uint8 planes whose rows are 8-byte aligned with stride_x 1:
// a thread reads 8 bytes of each of its two source rows and makes four adjacent texels, so
// a warp load moves 256 bytes. (One-byte loads moved 64 and held the kernel to a fraction of the bandwidth.)
template <class Store>
__device__ void first_tile_of_bytes(const Filter& filter, float* tile_a, const Plane<const uint8_t>& src,
                                    uint32_t tile_x, uint32_t tile_y, uint32_t width, uint32_t height, Store store) {
    constexpr uint32_t kRun = 4, kRunsPerRow = kTile / kRun;
    static_assert(kTile * kTile == TVLM_BOX_THREADS * kRun, "one run of four texels per thread covers the tile");
    const uint32_t lx = threadIdx.x % kRunsPerRow * kRun, ly = threadIdx.x / kRunsPerRow;
    const uint32_t x = tile_x * kTile + lx, y = tile_y * kTile + ly;
    float v[kRun] = {};
    if (x < width && y < height) {
        if (x + kRun <= width) {
            const uint2 top = __ldg(reinterpret_cast<const uint2*>(src.at(2 * x, 2 * y)));
            const uint2 bottom = __ldg(reinterpret_cast<const uint2*>(src.at(2 * x, 2 * y + 1)));
#pragma unroll
            for (uint32_t k = 0; k < kRun; ++k)
                v[k] = filter.halve(byte_of(top, 2 * k), byte_of(top, 2 * k + 1), byte_of(bottom, 2 * k),
                                    byte_of(bottom, 2 * k + 1));
        } else {  // the row's last texels: a full 8-byte load would pass its end
            for (uint32_t k = 0; x + k < width; ++k) {
                const uint32_t sx = 2 * (x + k);
                v[k] = filter.halve(src.load(sx, 2 * y), src.load(sx + 1, 2 * y), src.load(sx, 2 * y + 1),
                                    src.load(sx + 1, 2 * y + 1));
            }
        }
#pragma unroll
        for (uint32_t k = 0; k < kRun; ++k)
            if (x + k < width) store(1, x + k, y, v[k]);
    }
#pragma unroll
    for (uint32_t k = 0; k < kRun; ++k) tile_a[ly * kTile + lx + k] = v[k];
}

// kStep: halving (2:1 in both axes), odd (any ratio), or halving bytes with aligned rows.
enum class Step { halving, odd, aligned_bytes };

template <class E, Step kStep>
__global__ void __launch_bounds__(TVLM_BOX_THREADS) tensor_mips_kernel(const __grid_constant__ TensorMipsPass p) {
    __shared__ float tile_a[kTile * kTile];
    __shared__ float tile_b[kTile * kTile / 4];
    const Filter filter{p.params.kind, nullptr};  // no sRGB: tables unused
    const uint32_t b = blockIdx.z / p.src.channels, c = blockIdx.z % p.src.channels;
    const uint32_t tile_x = blockIdx.x + p.params.tile_x, tile_y = blockIdx.y + p.params.tile_y;
    const Plane<const E> src(static_cast<const E*>(image_data(p.src, p.sources, b)), p.src, c);
    const uint32_t width = max(1u, p.params.src_width >> 1), height = max(1u, p.params.src_height >> 1);
    const auto store_level = [&](uint32_t step, uint32_t x, uint32_t y, float v) {
        const TensorView& level = level_view(p, step);
        if (level.data) Plane<E>(level, b, c).store(x, y, v);  // null: a level nobody reads
        store_surface<E>(p.surfaces, step, b, c, x, y, v);
    };
    if constexpr (kStep == Step::aligned_bytes)
        first_tile_of_bytes(filter, tile_a, src, tile_x, tile_y, width, height, store_level);
    else
        first_tile(
            tile_a, tile_x, tile_y, width, height,
            [&](uint32_t x, uint32_t y) {
                if (kStep == Step::halving)
                    return filter.halve(src.load(2 * x, 2 * y), src.load(2 * x + 1, 2 * y), src.load(2 * x, 2 * y + 1),
                                        src.load(2 * x + 1, 2 * y + 1), 0);
                return box_value(filter, src, x, y, p.params.src_width, p.params.src_height);
            },
            store_level);
    halve_tile_levels(filter, tile_a, tile_b, p.params.levels, tile_x, tile_y, width, height, store_level);
}

template <class E>
void launch_for(const TensorMipsPass& p, dim3 grid, cudaStream_t stream) {
    const bool halving = p.params.src_width % 2 == 0 && p.params.src_height % 2 == 0;
    if constexpr (std::is_same_v<E, uint8_t>) {
        if (halving && rows_aligned(p.src, p.sources, p.layers, 8)) {  // first_tile_of_bytes
            tensor_mips_kernel<E, Step::aligned_bytes><<<grid, TVLM_BOX_THREADS, 0, stream>>>(p);
            return;
        }
    }
    if (halving) tensor_mips_kernel<E, Step::halving><<<grid, TVLM_BOX_THREADS, 0, stream>>>(p);
    else tensor_mips_kernel<E, Step::odd><<<grid, TVLM_BOX_THREADS, 0, stream>>>(p);
}

}  // namespace

void launch_tensor_mips(const TensorMipsPass& pass, cudaStream_t stream) {
    const uint64_t planes = uint64_t{pass.layers} * pass.src.channels;
    if (planes == 0 || planes > 65535)
        throw Error("box mips over tensors take 1..65535 images x channels per call, not " + std::to_string(planes) +
                    ": split the batch");
    if (pass.sources.count && pass.sources.count != pass.layers)
        throw Error("box mips of " + std::to_string(pass.layers) + " layers from a list of " +
                    std::to_string(pass.sources.count) + " images: one image per layer");
    const dim3 grid(pass.tiles_x, pass.tiles_y, static_cast<uint32_t>(planes));
    switch (pass.src.dtype) {
        case TensorDtype::u8: launch_for<uint8_t>(pass, grid, stream); break;
        case TensorDtype::f16: launch_for<__half>(pass, grid, stream); break;
        case TensorDtype::f32: launch_for<float>(pass, grid, stream); break;
        case TensorDtype::bf16:
            throw Error("bfloat16 has no box format of its own: build bfloat16 chains through a float32 texture");
    }
    TVLM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tvlm
