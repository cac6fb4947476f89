#pragma once
// Where the processors' kernels (image_resize.cu, two_pass_resize.cu, tiled_resize.cu,
// fused_resize.cu) put an output pixel of the window, how its value is rescaled, normalized
// and stored, and how they are launched for the output's dtype: one definition for the
// texture filter and the software filter's kernels.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "cuda/cuda_check.h"
#include "cuda/fast_divmod.h"
#include "cuda/processors/image_resize.h"

namespace tvlm::resize_output {

// Output pixel i of an image: its (x, y) in the written window, and where its channel-0,
// time-0 value goes (relative to the image's output), plus the channel and time strides.
// Offsets inside one image are 32-bit (check_resize_target bounds them).
struct Place {
    uint32_t x, y;
    uint32_t offset;
    uint32_t channel_stride, time_stride;
};

// How output values are normalized: Hugging Face's (v * multiply - subtract[c]) / divide[c].
// Where every value is a byte (round_to_byte), the division is a multiplication by the
// divisor's reciprocal and one correction (Markstein's: an FFMA for the remainder, one to
// add it back), which normalizer_of() checks on the host gives the quotient's own bits for
// all 256 bytes of each channel; else (or where it does not) the division itself: a
// reciprocal, a range check and five FFMAs, a third of an output value's instructions.
struct Normalizer {
    float reciprocal[3] = {1.0f, 1.0f, 1.0f};
    bool by_reciprocal = false;
};
Normalizer normalizer_of(const ResizeTarget& t);

// The target's sizes as fast divisors, and its Normalizer, built once on the host: every
// division of the output order is by a run-time size.
struct Order {
    Normalizer normalizer;
    FastDivmod width;                            // planar, tiles: rows
    FastDivmod area, merge_area;                 // merged: pixels per patch, patches per group
    FastDivmod groups_wide, merge, patch, cell;  // cell: patch_size * merge_size
    FastDivmod tile_width, tile_height;          // tiles
    uint32_t tiles_wide = 0, tile_area = 0;
    uint32_t plane = 0;  // width * height
};

inline Order order_of(const ResizeTarget& t) {
    Order o;
    o.normalizer = normalizer_of(t);
    o.width = FastDivmod(t.width);
    o.plane = t.width * t.height;
    if (t.layout == ResizeLayout::merged_patches) {
        o.area = FastDivmod(t.patch_size * t.patch_size);
        o.merge_area = FastDivmod(t.merge_size * t.merge_size);
        o.groups_wide = FastDivmod(t.width / (t.patch_size * t.merge_size));
        o.merge = FastDivmod(t.merge_size);
        o.patch = FastDivmod(t.patch_size);
        o.cell = FastDivmod(t.patch_size * t.merge_size);
    } else if (t.layout == ResizeLayout::tiles) {
        o.tile_width = FastDivmod(t.tile_width);
        o.tile_height = FastDivmod(t.tile_height);
        o.tiles_wide = t.width / t.tile_width;
        o.tile_area = t.tile_width * t.tile_height;
    }
    return o;
}

__device__ inline Place place(const ResizeTarget& t, const Order& o, uint32_t i) {
    if (t.layout == ResizeLayout::planar) {
        uint32_t x;
        const uint32_t y = o.width.divmod(i, x);
        return {x, y, i, o.plane, 0};
    }
    if (t.layout == ResizeLayout::tiles) {
        uint32_t x, in_x, in_y;
        const uint32_t y = o.width.divmod(i, x);
        const uint32_t tile_x = o.tile_width.divmod(x, in_x), tile_y = o.tile_height.divmod(y, in_y);
        const uint32_t tile = tile_y * o.tiles_wide + tile_x;
        return {x, y, tile * 3 * o.tile_area + in_y * o.tile_width.divisor + in_x, o.tile_area, 0};
    }
    const uint32_t p = t.patch_size, m = t.merge_size, area = o.area.divisor;
    uint32_t s, within, group_x, within_x, sx;
    const uint32_t n = o.area.divmod(i, s);
    const uint32_t group = o.merge_area.divmod(n, within);
    const uint32_t group_y = o.groups_wide.divmod(group, group_x);
    const uint32_t within_y = o.merge.divmod(within, within_x);
    const uint32_t sy = o.patch.divmod(s, sx);
    return {(group_x * m + within_x) * p + sx, (group_y * m + within_y) * p + sy,
            n * 3 * t.temporal_patch_size * area + s, t.temporal_patch_size * area, area};
}

// The same place from the pixel's (x, y) in the window: the inverse of place(), for kernels
// whose threads are laid out over the window rather than over the output order.
__device__ inline Place place_at(const ResizeTarget& t, const Order& o, uint32_t x, uint32_t y) {
    if (t.layout == ResizeLayout::planar) return {x, y, y * o.width.divisor + x, o.plane, 0};
    if (t.layout == ResizeLayout::tiles) {
        uint32_t in_x, in_y;
        const uint32_t tile_x = o.tile_width.divmod(x, in_x), tile_y = o.tile_height.divmod(y, in_y);
        const uint32_t tile = tile_y * o.tiles_wide + tile_x;
        return {x, y, tile * 3 * o.tile_area + in_y * o.tile_width.divisor + in_x, o.tile_area, 0};
    }
    const uint32_t m = t.merge_size, area = o.area.divisor;
    uint32_t cell_x, cell_y, sx, sy;
    const uint32_t group_x = o.cell.divmod(x, cell_x), group_y = o.cell.divmod(y, cell_y);
    const uint32_t within_x = o.patch.divmod(cell_x, sx), within_y = o.patch.divmod(cell_y, sy);
    const uint32_t n = (group_y * o.groups_wide.divisor + group_x) * m * m + within_y * m + within_x;
    return {x, y, n * 3 * t.temporal_patch_size * area + sy * o.patch.divisor + sx, t.temporal_patch_size * area, area};
}

template <class Out>
__device__ Out to_output(float v);
template <>
__device__ inline float to_output<float>(float v) {
    return v;
}
template <>
__device__ inline __half to_output<__half>(float v) {
    return __float2half_rn(v);
}
// uint8 outputs are the resized image itself (check_resize_target: rounded to bytes, no
// rescale or normalize), so the value is already an integer in [0, 255].
template <>
__device__ inline uint8_t to_output<uint8_t>(float v) {
    return static_cast<uint8_t>(v);
}
template <>
__device__ inline __nv_bfloat16 to_output<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

// body(T{}) with T the C++ type of a tensor dtype: each kernel is a template per input or
// output type (loads and stores are the hot path), picked once per launch here.
template <class Body>
void with_element_type(TensorDtype dtype, Body&& body) {
    switch (dtype) {
        case TensorDtype::f32: body(float{}); break;
        case TensorDtype::f16: body(__half{}); break;
        case TensorDtype::bf16: body(__nv_bfloat16{}); break;
        case TensorDtype::u8: body(uint8_t{}); break;
    }
}

// Threads a block for kernels with a thread per output pixel (or pair of pixels).
constexpr int kBlock = 256;

// A thread per output pixel of the window: blocks along x, an image per grid row.
inline dim3 grid_of(const ResizeTarget& t) {
    return dim3(unsigned((uint64_t(t.width) * t.height + kBlock - 1) / kBlock), t.images);
}

// body(std::integral_constant<int, n>{}) where Least <= n <= Most, and true; else false: a
// kernel template's instance for a run-time count (taps, groups of taps) it fixes at compile
// time.
template <int Least, int Most, class Body>
bool with_count(int n, Body&& body) {
    if constexpr (Least > Most) {
        return false;
    } else {
        if (n != Least) return with_count<Least + 1, Most>(n, body);
        body(std::integral_constant<int, Least>{});
        return true;
    }
}

// launch(Out{}) launches a kernel for the target's output type Out; then the launch's error.
template <class Launch>
void launch_for_output(const ResizeTarget& t, Launch&& launch) {
    with_element_type(t.out_dtype, launch);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

// torch.round (half to even) of v clamped to [0, 255], without the rounding instruction (a
// conversion, at an eighth of the FFMA rate): adding 1.5 * 2^23 leaves no fraction bits, so
// the addition rounds to nearest even and the subtraction is exact.
__device__ inline float rounded_byte(float v) {
    constexpr float kNoFraction = 12582912.0f;
    return __fsub_rn(__fadd_rn(fminf(fmaxf(v, 0.0f), 255.0f), kNoFraction), kNoFraction);
}

// Hugging Face's rescale and normalize of channel c, in its order ((v * r - mean) / std,
// the product and difference one FFMA as nvcc contracts it), to the quotient's bits.
__device__ inline float normalized(const ResizeTarget& t, const Normalizer& n, int c, float v) {
    const float x = __fmaf_rn(v, t.multiply, -t.subtract[c]);
    if (!n.by_reciprocal) return x / t.divide[c];
    const float q = __fmul_rn(x, n.reciprocal[c]);
    return __fmaf_rn(__fmaf_rn(-q, t.divide[c], x), n.reciprocal[c], q);
}

// Channel c's resized value as stored: rounded where the target says, rescaled, normalized.
template <class Out>
__device__ inline Out output_value(const ResizeTarget& t, const Order& o, int c, float value) {
    return to_output<Out>(normalized(t, o.normalizer, c, t.round_to_byte ? rounded_byte(value) : value));
}

// Rescale, normalize, store in each time slot (at least one: check_resize_target).
template <class Out>
__device__ inline void write_pixel(const ResizeTarget& t, const Order& o, uint32_t image, const Place& at,
                                   const float value[3]) {
    Out* out = static_cast<Out*>(t.out) + image * t.image_stride + at.offset + t.first_time * at.time_stride;
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        const Out normalized_value = output_value<Out>(t, o, c, value[c]);
        Out* to = out + c * at.channel_stride;
        to[0] = normalized_value;
        for (uint32_t k = 1; k < t.times; ++k) to[k * at.time_stride] = normalized_value;
    }
}

}  // namespace tvlm::resize_output
