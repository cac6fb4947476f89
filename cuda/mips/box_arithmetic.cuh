#pragma once
// The exact box of engine/mips/box_filter.h in device code: which source texels (taps) and
// weights make a texel of the next level, and how an average is rounded into each
// format (bytes half up, sRGB bytes in linear light, binary16 to nearest even, float).
// Shared by the surface kernels (box_mips.cu) and the kernels over strided tensors
// (tensor_mips.cu), so both store bit-identical levels. Device code only.
#include <cuda_fp16.h>

#include <cstdint>

#include "shaders/shader_params.h"

namespace tvlm::box {

struct Tables {
    uint32_t linear[256];
    uint32_t threshold[255];
};

struct Taps {
    uint32_t first, count, weight[3], sum;
};

__device__ inline Taps taps(uint32_t i, uint32_t s) {
    if (s == 1) return {i, 1, {1, 0, 0}, 1};
    if (s % 2 == 0) return {2 * i, 2, {1, 1, 0}, 2};
    const uint32_t d = s / 2;
    return {2 * i, 3, {d - i, d, i + 1}, s};
}

// A float level's average n / d, rounded to float. A zero is +0: the reference's sums
// start at 0, so four -0s average to +0, where a 2:1 step's (a + b) + (c + d) gives -0.
__device__ inline float float_average(double n, double d) { return static_cast<float>(n / d) + 0.0f; }
// The binary16 a float16 level stores for it: to nearest even, as the reference and Vulkan do.
__device__ inline unsigned short half_of(float average) { return __half_as_ushort(__float2half_rn(average)); }

__device__ inline float component(float4 v, uint32_t c) { return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w; }
__device__ inline void set_component(float4& v, uint32_t c, float x) {
    if (c == 0) v.x = x;
    else if (c == 1) v.y = x;
    else if (c == 2) v.z = x;
    else v.w = x;
}

struct Filter {
    uint32_t kind;
    const Tables* tables;

    __device__ bool bytes() const { return kind == TVLM_BOX_UNORM8 || kind == TVLM_BOX_SRGB8; }
    __device__ bool linear_light(uint32_t c) const { return kind == TVLM_BOX_SRGB8 && c < 3; }
    __device__ double averaged(float stored, uint32_t c) const {
        return linear_light(c) ? static_cast<double>(tables->linear[static_cast<uint32_t>(stored)]) : stored;
    }
    // #{k : n / d >= threshold[k]}: the float encoding of the average, then exact steps.
    __device__ float encode_srgb(double n, double d) const {
        const float l = static_cast<float>(n / d) * (1.0f / 16777216.0f);
        const float e = l <= 0.0031308f ? l * 12.92f : 1.055f * powf(l, 1.0f / 2.4f) - 0.055f;
        uint32_t b = static_cast<uint32_t>(fminf(fmaxf(e * 255.0f + 0.5f, 0.0f), 255.0f));
        while (b < 255 && n >= static_cast<double>(tables->threshold[b]) * d) ++b;
        while (b > 0 && n < static_cast<double>(tables->threshold[b - 1]) * d) --b;
        return static_cast<float>(b);
    }
    __device__ static float round_half_up(double n, double d) {
        double q = floor((2.0 * n + d) / (2.0 * d));
        if ((q + 1.0) * 2.0 * d <= 2.0 * n + d) q += 1.0;
        if (q * 2.0 * d > 2.0 * n + d) q -= 1.0;
        return static_cast<float>(q);
    }
    __device__ float stored_value(double n, double d, uint32_t c) const {
        if (linear_light(c)) return encode_srgb(n, d);
        if (bytes()) return round_half_up(n, d);
        const float f = float_average(n, d);
        return kind == TVLM_BOX_FLOAT16 ? __half2float(__ushort_as_half(half_of(f))) : f;
    }
    // Channel c of a 2:1 step: texels (a, b) of one row and (e, f) of the next, rows
    // summed first like the reference.
    __device__ float halve(float a, float b, float e, float f, uint32_t c) const {
        if (linear_light(c)) {
            const uint32_t n = tables->linear[static_cast<uint32_t>(a)] + tables->linear[static_cast<uint32_t>(b)] +
                               tables->linear[static_cast<uint32_t>(e)] + tables->linear[static_cast<uint32_t>(f)];
            return encode_srgb(n, 4.0);
        }
        if (bytes()) return floorf((a + b + e + f) * 0.25f + 0.5f);
        const double n = (static_cast<double>(a) + b) + (static_cast<double>(e) + f);
        return stored_value(n, 4.0, c);
    }
    // One channel that is not sRGB colour (kernels over one-channel tensor planes).
    __device__ float halve(float a, float b, float e, float f) const { return halve(a, b, e, f, 3); }
    __device__ float4 halve(float4 v00, float4 v10, float4 v01, float4 v11) const {
        float4 out;
        for (uint32_t c = 0; c < 4; ++c)
            set_component(out, c, halve(component(v00, c), component(v10, c), component(v01, c), component(v11, c), c));
        return out;
    }
};

// The tile scheme both per-texel kernels share (box_mips.cu over surfaces, tensor_mips.cu
// over tensors): a block of TVLM_BOX_THREADS owns a 32x32 tile (tile_x, tile_y) of level
// a+1, which is width x height. first_tile() computes it, texel(x, y) each, stores each
// texel inside the level (store(1, x, y, v)) and keeps the tile in shared `tile_a`;
// halve_tile_levels() then halves it down levels a+2 .. a+levels in shared memory, storing
// as it goes (store(step, x, y, v)). V is float4 (surfaces) or float (one channel).
template <class V, class Texel, class Store>
__device__ void first_tile(V* tile_a, uint32_t tile_x, uint32_t tile_y, uint32_t width, uint32_t height, Texel texel,
                           Store store) {
    constexpr uint32_t tile = TVLM_BOX_TILE, threads = TVLM_BOX_THREADS;
    const uint32_t t = threadIdx.x;
#pragma unroll
    for (uint32_t r = 0; r < tile * tile / threads; ++r) {
        const uint32_t lx = t % tile, ly = t / tile + r * (threads / tile);
        const uint32_t x = tile_x * tile + lx, y = tile_y * tile + ly;
        V v{};
        if (x < width && y < height) {
            v = texel(x, y);
            store(1, x, y, v);
        }
        tile_a[ly * tile + lx] = v;
    }
}

template <class V, class Store>
__device__ void halve_tile_levels(const Filter& filter, V* tile_a, V* tile_b, uint32_t levels, uint32_t tile_x,
                                  uint32_t tile_y, uint32_t width, uint32_t height, Store store) {
    const uint32_t t = threadIdx.x;
    uint32_t edge = TVLM_BOX_TILE;
#pragma unroll
    for (uint32_t step = 2; step <= TVLM_BOX_MAX_LEVELS; ++step) {
        if (step > levels) break;
        __syncthreads();
        width >>= 1;
        height >>= 1;
        const uint32_t half_edge = edge / 2;
        if (t < half_edge * half_edge) {
            const uint32_t lx = t % half_edge, ly = t / half_edge;
            const uint32_t x = tile_x * half_edge + lx, y = tile_y * half_edge + ly;
            const V* from = step % 2 == 0 ? tile_a : tile_b;
            V* to = step % 2 == 0 ? tile_b : tile_a;
            const uint32_t i = 2 * ly * edge + 2 * lx;
            const V v = filter.halve(from[i], from[i + 1], from[i + edge], from[i + edge + 1]);
            if (x < width && y < height) store(step, x, y, v);
            to[ly * half_edge + lx] = v;
        }
        edge = half_edge;
    }
}

}  // namespace tvlm::box
