// The processors' resize: the texture filter (one thread per output pixel of one image, in
// output order, so every store of a warp is contiguous: find the pixel's place in the
// resized image, sample, rescale + normalize each channel, store it in every time slot),
// and the software filter's entry: torch's spans and weights, then the copy, the fused
// kernel (fused_resize.h), the tiled one (tiled_resize.h) or the two passes (two_pass_resize.h).
#include "cuda/processors/image_resize.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "cuda/cuda_check.h"
#include "cuda/processors/fused_resize.h"
#include "cuda/processors/resize_output.cuh"
#include "cuda/processors/resize_spans.h"
#include "cuda/processors/row_taps.cuh"
#include "cuda/processors/tiled_resize.h"
#include "cuda/processors/two_pass_resize.h"
#include "cuda/tensors/tensor_elements.cuh"
#include "engine/error.h"

namespace tvlm {

namespace {

using namespace resize_output;
using namespace resize_spans;

template <class Out>
__global__ void texture_kernel(cudaTextureObject_t texture, bool layered, float texel_scale, ResizeTarget t, Order o) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, image = blockIdx.y;
    if (i >= o.plane) return;
    const Place at = place(t, o, i);
    // The output pixel's centre, and one output pixel as the footprint: the texture unit
    // picks the level (and the anisotropic taps when the two scales differ).
    const int x = t.crop_x + int(at.x), y = t.crop_y + int(at.y);
    if (x < 0 || y < 0 || x >= int(t.resized_width) || y >= int(t.resized_height)) {  // the zero padding
        const float zero[3] = {0.0f, 0.0f, 0.0f};
        write_pixel<Out>(t, o, image, at, zero);
        return;
    }
    const float du = 1.0f / float(t.resized_width), dv = 1.0f / float(t.resized_height);
    const float u = (float(x) + 0.5f) * du, v = (float(y) + 0.5f) * dv;
    const float4 s = layered ? tex2DLayeredGrad<float4>(texture, u, v, int(t.first_layer + image),
                                                        make_float2(du, 0.0f), make_float2(0.0f, dv))
                             : tex2DGrad<float4>(texture, u, v, make_float2(du, 0.0f), make_float2(0.0f, dv));
    const float value[3] = {s.x * texel_scale, s.y * texel_scale, s.z * texel_scale};
    write_pixel<Out>(t, o, image, at, value);
}

// ---- PyTorch's antialiased bicubic and bilinear (aten/src/ATen/native/cuda/UpSample.cuh), in float ----

// Keys' cubic with a = -0.5, as torch's antialiasing filter writes it.
__device__ float bicubic_filter(float x) {
    constexpr float a = -0.5f;
    x = fabsf(x);
    if (x < 1.0f) return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
    if (x < 2.0f) return (((x - 5.0f) * x + 8.0f) * x - 4.0f) * a;
    return 0.0f;
}

// The triangle, as torch's antialiased bilinear writes it.
__device__ float bilinear_filter(float x) {
    x = fabsf(x);
    return x < 1.0f ? 1.0f - x : 0.0f;
}

__device__ float filter_value(SoftwareFilter filter, float x) {
    return filter == SoftwareFilter::bilinear ? bilinear_filter(x) : bicubic_filter(x);
}

// The input span and weights of output index `i` along one axis: input [first, first +
// count), weight j = filter((j + first - centre + 0.5) * invscale) / total.
struct Span {
    int first, count;
    float first_minus_centre, invscale, total;
    SoftwareFilter filter;
    __device__ float weight(int j) const {
        return filter_value(filter, (j + first_minus_centre + 0.5f) * invscale) / total;
    }
};

__device__ Span span(uint32_t i, uint32_t in_size, uint32_t out_size, SoftwareFilter filter) {
    const float scale = float(in_size) / float(out_size);
    const float half_width = filter == SoftwareFilter::bilinear ? 1.0f : 2.0f;  // torch's interp_size / 2
    const float support = scale >= 1.0f ? half_width * scale : half_width;
    const float centre = scale * (float(i) + 0.5f);
    Span s;
    s.first = max(int(centre - support + 0.5f), 0);
    s.count = min(int(centre + support + 0.5f), int(in_size)) - s.first;
    s.first_minus_centre = float(s.first) - centre;
    s.invscale = scale >= 1.0f ? float(1.0 / double(scale)) : 1.0f;
    s.filter = filter;
    float total = 0.0f;
    for (int j = 0; j < s.count; ++j) total += filter_value(filter, (j + s.first_minus_centre + 0.5f) * s.invscale);
    s.total = total != 0.0f ? total : 1.0f;
    return s;
}

// blockIdx.y 0: the x axis (window columns), 1: the y axis (window rows).
__global__ void span_table_kernel(ResizeTarget t, uint32_t source_width, uint32_t source_height, SoftwareFilter filter,
                                  SpanTable x_table, SpanTable y_table) {
    const bool across = blockIdx.y == 0;
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, n = across ? t.width : t.height;
    if (i >= n) return;
    const int at = (across ? t.crop_x : t.crop_y) + int(i);
    const uint32_t in_size = across ? source_width : source_height;
    const uint32_t out_size = across ? t.resized_width : t.resized_height;
    const SpanTable& table = across ? x_table : y_table;
    if (at < 0 || at >= int(out_size)) {
        // The zero padding: no taps. Its span sits at the image's near edge, so a staged
        // block's span (first of its first column to end of its last) stays the image's.
        table.first[i] = at < 0 ? 0 : int(in_size);
        table.count[i] = 0;
        return;
    }
    const Span s = span(uint32_t(at), in_size, out_size, filter);
    table.first[i] = s.first;
    table.count[i] = s.count;
    const int taps = min(s.count, int(table.taps));  // max_taps bounds count: the min only guards the table
    for (int j = 0; j < taps; ++j) table.weights[size_t{i} * table.taps + j] = s.weight(j);
}

// A resize of a uint8 image to its own size is the image: torch's weights there are 0 and
// 1 (the filter's zeros fall on whole pixels), so every sum is one term. A copy into the
// target's window, rounding, normalization and layout, one thread per output pixel.
template <class Out>
__global__ void identity_kernel(TensorView source, const __grid_constant__ ImageList sources, ResizeTarget t, Order o) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, image = blockIdx.y;
    if (i >= o.plane) return;
    const Place at = place(t, o, i);
    const int x = t.crop_x + int(at.x), y = t.crop_y + int(at.y);
    float value[3] = {0.0f, 0.0f, 0.0f};  // the zero padding, where the window reaches past the image
    if (x >= 0 && y >= 0 && x < int(t.resized_width) && y < int(t.resized_height)) {
        const uint8_t* pixel = static_cast<const uint8_t*>(image_data(source, sources, t.first_layer + image)) +
                               int64_t(y) * source.stride_y + int64_t(x) * source.stride_x;
        for (int c = 0; c < 3; ++c) value[c] = row_taps::input_value(pixel[c * source.stride_c]);
    }
    write_pixel<Out>(t, o, image, at, value);
}

// identity_kernel four pixels of a row a thread, each channel's four values one vector
// store: for windows and tiles whose widths are multiples of 4, in outputs aligned to
// four values (identity_quads()). Each value is the one identity_kernel stores.
template <class Out>
__global__ void identity_quads_kernel(TensorView source, const __grid_constant__ ImageList sources, ResizeTarget t,
                                      Order o) {
    struct alignas(4 * sizeof(Out)) Quad {
        Out v[4];
    };
    const uint32_t i = 4 * (blockIdx.x * blockDim.x + threadIdx.x), image = blockIdx.y;
    if (i >= o.plane) return;
    const Place at = place(t, o, i);  // the quad's first pixel: its row holds all four, stored in a run
    const int x = t.crop_x + int(at.x), y = t.crop_y + int(at.y);
    const bool row_inside = y >= 0 && y < int(t.resized_height);
    const uint8_t* row = static_cast<const uint8_t*>(image_data(source, sources, t.first_layer + image)) +
                         int64_t(row_inside ? y : 0) * source.stride_y;
    Quad quad[3];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const bool inside = row_inside && x + k >= 0 && x + k < int(t.resized_width);
        const uint8_t* pixel = row + int64_t(inside ? x + k : 0) * source.stride_x;
#pragma unroll
        for (int c = 0; c < 3; ++c)
            quad[c].v[k] = output_value<Out>(t, o, c,
                                             inside ? row_taps::input_value(pixel[c * source.stride_c]) : 0.0f);
    }
    Out* out = static_cast<Out*>(t.out) + image * t.image_stride + at.offset;
#pragma unroll
    for (int c = 0; c < 3; ++c) *reinterpret_cast<Quad*>(out + c * at.channel_stride) = quad[c];
}

// Whether identity_quads_kernel can write the target: rows of whole quads (the window's and a
// tile's width multiples of 4) in one time slot, its output and image stride aligned to
// four values.
bool identity_quads(const ResizeTarget& t) {
    const size_t element = element_bytes(t.out_dtype);
    return t.layout != ResizeLayout::merged_patches && t.width % 4 == 0 &&
           (t.layout != ResizeLayout::tiles || t.tile_width % 4 == 0) && t.image_stride % 4 == 0 &&
           reinterpret_cast<uintptr_t>(t.out) % (4 * element) == 0;
}

}  // namespace

namespace resize_output {

Normalizer normalizer_of(const ResizeTarget& t) {
    Normalizer n;
    for (int c = 0; c < 3; ++c) n.reciprocal[c] = 1.0f / t.divide[c];
    if (!t.round_to_byte) return n;
    const auto bits = [](float f) {
        uint32_t b;
        std::memcpy(&b, &f, sizeof b);
        return b;
    };
    // A processor's calls repeat its normalization: the check (768 quotients) runs once per
    // thread for each of the last few normalizations seen.
    struct Checked {
        std::array<uint32_t, 7> key{};
        bool by_reciprocal = false;
    };
    constexpr size_t kKept = 8;
    thread_local std::array<Checked, kKept> kept{};
    thread_local size_t kept_count = 0;
    const std::array<uint32_t, 7> key = {bits(t.multiply),    bits(t.subtract[0]), bits(t.subtract[1]),
                                         bits(t.subtract[2]), bits(t.divide[0]),   bits(t.divide[1]),
                                         bits(t.divide[2])};
    for (size_t i = 0; i < std::min(kept_count, kKept); ++i)
        if (kept[i].key == key) {
            n.by_reciprocal = kept[i].by_reciprocal;
            return n;
        }
    // The device's arithmetic, on the host: fmaf is fused and float division correctly rounded here too.
    bool exact = true;
    for (int c = 0; c < 3 && exact; ++c)
        for (int v = 0; v < 256 && exact; ++v) {
            const float x = std::fmaf(float(v), t.multiply, -t.subtract[c]);
            const float want = x / t.divide[c];
            const float q = x * n.reciprocal[c];
            const float got = std::fmaf(std::fmaf(-q, t.divide[c], x), n.reciprocal[c], q);
            exact = bits(got) == bits(want);
        }
    kept[kept_count++ % kKept] = {key, exact};
    n.by_reciprocal = exact;
    return n;
}

}  // namespace resize_output

void check_resize_target(const ResizeTarget& t) {
    const auto size = [](uint32_t w, uint32_t h) { return std::to_string(w) + "x" + std::to_string(h); };
    if (t.images == 0 || t.images > 65535)
        throw Error("a resize covers 1 to 65535 images, not " + std::to_string(t.images));
    if (t.width == 0 || t.height == 0 || t.width > INT32_MAX || t.height > INT32_MAX ||
        int64_t{t.crop_x} + t.width <= 0 || int64_t{t.crop_y} + t.height <= 0 ||
        int64_t{t.crop_x} >= int64_t{t.resized_width} || int64_t{t.crop_y} >= int64_t{t.resized_height})
        throw Error("the window " + size(t.width, t.height) + " at (" + std::to_string(t.crop_x) + ", " +
                    std::to_string(t.crop_y) + ") is empty or misses the resized " +
                    size(t.resized_width, t.resized_height) + " image");
    if (t.layout == ResizeLayout::merged_patches) {
        const uint32_t cell = t.patch_size * t.merge_size;
        if (cell == 0 || t.width % cell || t.height % cell)
            throw Error("merged patches need a window whose sides are multiples of patch_size * merge_size (" +
                        std::to_string(cell) + "), not " + size(t.width, t.height));
        if (t.times == 0 || t.first_time + t.times > t.temporal_patch_size)
            throw Error("time slots " + std::to_string(t.first_time) + ".." + std::to_string(t.first_time + t.times) +
                        " do not fit temporal_patch_size " + std::to_string(t.temporal_patch_size));
    } else if (t.times != 1 || t.first_time != 0) {
        throw Error("planar and tiled outputs have one time slot");
    }
    if (t.layout == ResizeLayout::tiles &&
        (t.tile_width == 0 || t.tile_height == 0 || t.width % t.tile_width || t.height % t.tile_height))
        throw Error("tiles of " + size(t.tile_width, t.tile_height) + " do not cut the window " +
                    size(t.width, t.height) + " into whole tiles");
    const uint64_t slots = t.layout == ResizeLayout::merged_patches ? t.temporal_patch_size : 1;
    if (uint64_t{3} * t.width * t.height * slots > UINT32_MAX)
        throw Error("one image's output of " + size(t.width, t.height) + " exceeds 2^32 values: resize to less");
    if (t.out_dtype == TensorDtype::u8 &&
        !(t.round_to_byte && t.multiply == 1.0f && t.subtract[0] == 0.0f && t.subtract[1] == 0.0f &&
          t.subtract[2] == 0.0f && t.divide[0] == 1.0f && t.divide[1] == 1.0f && t.divide[2] == 1.0f))
        throw Error(
            "uint8 outputs are the resized image itself: set round_to_byte, multiply 1, subtract 0 and "
            "divide 1 (normalized outputs are float32, float16 or bfloat16)");
    if (!t.out) throw Error("the resize has no output buffer (a null pointer)");
}

void resize_from_texture(cudaTextureObject_t texture, bool layered, uint32_t source_width, uint32_t source_height,
                         float texel_scale, const ResizeTarget& target, cudaStream_t stream) {
    check_resize_target(target);
    if (source_width == 0 || source_height == 0) throw Error("the source texture is empty");
    launch_for_output(target, [&](auto out) {
        texture_kernel<decltype(out)>
            <<<grid_of(target), kBlock, 0, stream>>>(texture, layered, texel_scale, target, order_of(target));
    });
}

namespace {

// The kernel that takes a software resize, chosen once for both the scratch's size and the
// launch: a uint8 image resized to its own size is copied (no tables, no passes); otherwise
// the fused kernel, then the tiled one, where their tests take it; else the two passes,
// the only one with rows between passes.
enum class SoftwareKernel { copy, fused, fused_rows, tiled, two_pass };

SoftwareKernel software_kernel(TensorDtype dtype, uint32_t source_width, uint32_t source_height, const ResizeTarget& t,
                               SoftwareFilter filter) {
    if (dtype == TensorDtype::u8 && source_width == t.resized_width && source_height == t.resized_height)
        return SoftwareKernel::copy;
    if (fused_resize_fits(dtype, source_width, source_height, t, filter) &&
        !two_pass_words_preferred(source_width, source_height, t, filter))
        return fused_rows_preferred(dtype, source_width, source_height, t, filter) ? SoftwareKernel::fused_rows
                                                                                   : SoftwareKernel::fused;
    if (tiled_resize_rows(dtype, source_width, source_height, t, filter)) return SoftwareKernel::tiled;
    return SoftwareKernel::two_pass;
}

// The rows between the passes that `kernel` writes for the target: none for the one-pass kernels.
size_t rows_bytes_of(SoftwareKernel kernel, uint32_t source_height, const ResizeTarget& t) {
    if (kernel != SoftwareKernel::two_pass && kernel != SoftwareKernel::fused_rows) return 0;
    return size_t{t.images} * source_height * t.width * 3 * sizeof(float);
}

}  // namespace

size_t software_tables_bytes(uint32_t source_width, uint32_t source_height, const ResizeTarget& target,
                             SoftwareFilter filter) {
    return table_bytes(target.width, max_taps(source_width, target.resized_width, filter)) +
           table_bytes(target.height, max_taps(source_height, target.resized_height, filter));
}

size_t software_rows_bytes(uint32_t source_width, uint32_t source_height, const ResizeTarget& target,
                           SoftwareFilter filter, TensorDtype source_dtype) {
    return rows_bytes_of(software_kernel(source_dtype, source_width, source_height, target, filter), source_height,
                         target);
}

void resize_software(const TensorView& source, uint32_t source_width, uint32_t source_height,
                     const ResizeTarget& target, SoftwareFilter filter, const SoftwareScratch& scratch,
                     cudaStream_t stream, const ImageList& sources) {
    check_resize_target(target);
    if (source_width == 0 || source_height == 0 || (!sources.count && !source.data))
        throw Error("the source image is empty");
    if (sources.count && uint64_t{target.first_layer} + target.images > sources.count)
        throw Error("a resize of " + std::to_string(target.images) + " images from a list of " +
                    std::to_string(sources.count));
    if (source.channels < 3) throw Error("the source image needs 3 channels (RGB)");
    SoftwareKernel kernel = software_kernel(source.dtype, source_width, source_height, target, filter);
    // The fused kernel's row filter alone is a choice of speed: where the rows were not sized
    // for it (the last chunk of a list whose whole target took the fused kernel), the fused
    // kernel writes the same values.
    if (kernel == SoftwareKernel::fused_rows && scratch.rows_bytes < rows_bytes_of(kernel, source_height, target))
        kernel = SoftwareKernel::fused;
    if (kernel == SoftwareKernel::copy) {
        if (identity_quads(target)) {
            const dim3 grid(unsigned((uint64_t(target.width) * target.height / 4 + kBlock - 1) / kBlock),
                            target.images);
            launch_for_output(target, [&](auto out) {
                identity_quads_kernel<decltype(out)>
                    <<<grid, kBlock, 0, stream>>>(source, sources, target, order_of(target));
            });
            return;
        }
        launch_for_output(target, [&](auto out) {
            identity_kernel<decltype(out)>
                <<<grid_of(target), kBlock, 0, stream>>>(source, sources, target, order_of(target));
        });
        return;
    }
    const size_t rows_needed = rows_bytes_of(kernel, source_height, target);
    if (!scratch.tables || (rows_needed && (!scratch.rows || scratch.rows_bytes < rows_needed)))
        throw Error("the software resize's scratch is missing or short (" + std::to_string(scratch.rows_bytes) +
                    " bytes of rows for " + std::to_string(rows_needed) +
                    "): give it software_tables_bytes() and software_rows_bytes() of device memory");
    const SpanTable x_table = table_at(scratch.tables, target.width,
                                       max_taps(source_width, target.resized_width, filter));
    const SpanTable y_table = table_at(scratch.tables + table_bytes(target.width, x_table.taps), target.height,
                                       max_taps(source_height, target.resized_height, filter));
    if (!scratch.tables_written) {
        const dim3 grid((std::max(target.width, target.height) + kBlock - 1) / kBlock, 2);
        span_table_kernel<<<grid, kBlock, 0, stream>>>(target, source_width, source_height, filter, x_table, y_table);
        TVLM_CUDA_CHECK(cudaGetLastError());
    }
    if (kernel == SoftwareKernel::fused)
        resize_fused(source, sources, source_width, source_height, target, filter, x_table, y_table, stream);
    else if (kernel == SoftwareKernel::fused_rows)
        resize_fused_rows(source, sources, source_width, source_height, target, filter, x_table, y_table, scratch.rows,
                          stream);
    else if (kernel == SoftwareKernel::tiled)
        resize_tiled(source, sources, source_width, source_height, target, filter, x_table, y_table, stream);
    else resize_two_pass(source, sources, source_width, source_height, target, x_table, y_table, scratch.rows, stream);
}

}  // namespace tvlm
