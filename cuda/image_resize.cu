// One thread per output pixel of one image, in output order (so every store of a warp is
// contiguous): find the pixel's place in the resized image, filter once (texture unit or
// software bicubic), rescale + normalize each channel, store it in every time slot.
#include "image_resize.h"

#include <string>

#include "cuda_check.h"
#include "error.h"
#include "tensor_elements.cuh"

namespace tvlm {

namespace {

constexpr int kBlock = 256;

// Output pixel i of an image: its (x, y) in the written window, and where its channel-0,
// time-0 value goes (relative to the image's output), plus the channel and time strides.
struct Place {
    uint32_t x, y;
    uint64_t offset;
    uint64_t channel_stride, time_stride;
};

__device__ Place place(const ResizeTarget& t, uint32_t i) {
    if (t.layout == ResizeLayout::planar) {
        const uint64_t plane = uint64_t(t.width) * t.height;
        return {i % t.width, i / t.width, i, plane, 0};
    }
    const uint32_t p = t.patch_size, m = t.merge_size, area = p * p;
    const uint32_t n = i / area, s = i % area;
    const uint32_t group = n / (m * m), within = n % (m * m);
    const uint32_t groups_wide = t.width / (p * m);
    const uint32_t gx = (group % groups_wide) * m + within % m, gy = (group / groups_wide) * m + within / m;
    return {gx * p + s % p, gy * p + s / p, uint64_t(n) * 3 * t.temporal_patch_size * area + s,
            uint64_t(t.temporal_patch_size) * area, area};
}

// Rescale, normalize, store: Hugging Face's arithmetic in its order ((v * r - mean) / std).
__device__ void write_pixel(const ResizeTarget& t, uint32_t image, const Place& at, const float value[3]) {
    const uint64_t base = image * t.image_stride + at.offset + uint64_t(t.first_time) * at.time_stride;
    for (int c = 0; c < 3; ++c) {
        float v = value[c];
        if (t.round_to_byte) v = rintf(fminf(fmaxf(v, 0.0f), 255.0f));  // torch.round: half to even
        const float normalized = (v * t.multiply - t.subtract[c]) / t.divide[c];
        for (uint32_t k = 0; k < t.times; ++k)
            store_element(t.out, t.out_dtype, int64_t(base + c * at.channel_stride + k * at.time_stride), normalized);
    }
}

__global__ void texture_kernel(cudaTextureObject_t texture, bool layered, float texel_scale, ResizeTarget t) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, image = blockIdx.y;
    if (i >= t.width * t.height) return;
    const Place at = place(t, i);
    // The output pixel's centre, and one output pixel as the footprint: the texture unit
    // picks the level (and the anisotropic taps when the two scales differ).
    const float du = 1.0f / float(t.resized_width), dv = 1.0f / float(t.resized_height);
    const float u = (float(t.crop_x + at.x) + 0.5f) * du, v = (float(t.crop_y + at.y) + 0.5f) * dv;
    const float4 s = layered ? tex2DLayeredGrad<float4>(texture, u, v, int(t.first_layer + image),
                                                        make_float2(du, 0.0f), make_float2(0.0f, dv))
                             : tex2DGrad<float4>(texture, u, v, make_float2(du, 0.0f), make_float2(0.0f, dv));
    const float value[3] = {s.x * texel_scale, s.y * texel_scale, s.z * texel_scale};
    write_pixel(t, image, at, value);
}

// ---- PyTorch's antialiased bicubic (aten/src/ATen/native/cuda/UpSample.cuh), in float ----

// Keys' cubic with a = -0.5, as torch's antialiasing filter writes it.
__device__ float bicubic_filter(float x) {
    constexpr float a = -0.5f;
    x = fabsf(x);
    if (x < 1.0f) return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
    if (x < 2.0f) return (((x - 5.0f) * x + 8.0f) * x - 4.0f) * a;
    return 0.0f;
}

// The input span and weights of output index `i` along one axis: input [first, first +
// count), weight j = filter((j + first - centre + 0.5) * invscale) / total.
struct Span {
    int first, count;
    float first_minus_centre, invscale, total;
    __device__ float weight(int j) const { return bicubic_filter((j + first_minus_centre + 0.5f) * invscale) / total; }
};

__device__ Span span(uint32_t i, uint32_t in_size, uint32_t out_size) {
    const float scale = float(in_size) / float(out_size);
    const float support = scale >= 1.0f ? 2.0f * scale : 2.0f;
    const float centre = scale * (float(i) + 0.5f);
    Span s;
    s.first = max(int(centre - support + 0.5f), 0);
    s.count = min(int(centre + support + 0.5f), int(in_size)) - s.first;
    s.first_minus_centre = float(s.first) - centre;
    s.invscale = scale >= 1.0f ? float(1.0 / double(scale)) : 1.0f;
    float total = 0.0f;
    for (int j = 0; j < s.count; ++j) total += bicubic_filter((j + s.first_minus_centre + 0.5f) * s.invscale);
    s.total = total != 0.0f ? total : 1.0f;
    return s;
}

__global__ void bicubic_kernel(TensorView source, uint32_t source_width, uint32_t source_height, ResizeTarget t) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, image = blockIdx.y;
    if (i >= t.width * t.height) return;
    const Place at = place(t, i);
    const Span sx = span(t.crop_x + at.x, source_width, t.resized_width);
    const Span sy = span(t.crop_y + at.y, source_height, t.resized_height);
    // The row weights once per pixel, where they fit (downscales up to ~15x); beyond that
    // they are recomputed per row.
    constexpr int kCached = 64;
    float wx[kCached];
    const bool cached = sx.count <= kCached;
    if (cached)
        for (int j = 0; j < sx.count; ++j) wx[j] = sx.weight(j);
    float value[3] = {0.0f, 0.0f, 0.0f};
    const int64_t image_base = int64_t(t.first_layer + image) * source.stride_b;
    // Rows first, then the column of row results: torch's order of accumulation.
    for (int r = 0; r < sy.count; ++r) {
        const float wy = sy.weight(r);
        const int64_t row = image_base + int64_t(sy.first + r) * source.stride_y;
        float across[3] = {0.0f, 0.0f, 0.0f};
        for (int j = 0; j < sx.count; ++j) {
            const float w = cached ? wx[j] : sx.weight(j);
            const int64_t at = row + int64_t(sx.first + j) * source.stride_x;
            for (int c = 0; c < 3; ++c) across[c] += load_element(source.data, source.dtype, at + c * source.stride_c) * w;
        }
        for (int c = 0; c < 3; ++c) value[c] += across[c] * wy;
    }
    write_pixel(t, image, at, value);
}

dim3 grid_of(const ResizeTarget& t) {
    return dim3(unsigned((uint64_t(t.width) * t.height + kBlock - 1) / kBlock), t.images);
}

}  // namespace

void check_resize_target(const ResizeTarget& t) {
    const auto size = [](uint32_t w, uint32_t h) { return std::to_string(w) + "x" + std::to_string(h); };
    if (t.images == 0 || t.images > 65535) throw Error("a resize covers 1 to 65535 images, not " + std::to_string(t.images));
    if (t.width == 0 || t.height == 0 || uint64_t{t.crop_x} + t.width > t.resized_width ||
        uint64_t{t.crop_y} + t.height > t.resized_height)
        throw Error("the window " + size(t.width, t.height) + " at (" + std::to_string(t.crop_x) + ", " +
                    std::to_string(t.crop_y) + ") is empty or outside the resized " +
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
        throw Error("planar outputs have one time slot");
    }
    if (t.out_dtype == TensorDtype::u8) throw Error("processor outputs are float32, float16 or bfloat16");
    if (!t.out) throw Error("the resize has no output buffer (a null pointer)");
}

void resize_from_texture(cudaTextureObject_t texture, bool layered, uint32_t source_width, uint32_t source_height,
                         float texel_scale, const ResizeTarget& target, cudaStream_t stream) {
    check_resize_target(target);
    if (source_width == 0 || source_height == 0) throw Error("the source texture is empty");
    texture_kernel<<<grid_of(target), kBlock, 0, stream>>>(texture, layered, texel_scale, target);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

void resize_bicubic(const TensorView& source, uint32_t source_width, uint32_t source_height,
                    const ResizeTarget& target, cudaStream_t stream) {
    check_resize_target(target);
    if (source_width == 0 || source_height == 0 || !source.data) throw Error("the source image is empty");
    if (source.channels < 3) throw Error("the source image needs 3 channels (RGB)");
    bicubic_kernel<<<grid_of(target), kBlock, 0, stream>>>(source, source_width, source_height, target);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tvlm
