#include "cuda/sampling/patch_sampling.h"

#include <cuda_fp16.h>

#include "cuda/cuda_check.h"
#include "cuda/early_launch.cuh"
#include "engine/error.h"
#include "cuda/fast_divmod.h"

namespace tvlm {

namespace {

constexpr int kBlock = TVLM_SAMPLE_GROUP_SIZE;

struct SamplePlace {
    float u, v;                    // normalized position
    float dudx, dvdx, dudy, dvdy;  // gradients (one sample to the next along j, k)
};

// What every sample of a launch shares, worked out once on the host: the divisions that
// map a thread to its patch and sample, and the aspect ratios of place(). The kernel was
// bound by instruction issue, most of it a 64-bit division of the thread index and six float
// divisions by the level-0 size.
struct PatchGrid {
    FastDivmod per_patch, per_row;  // P * P samples, P a row
    float inv_size = 1;             // 1 / P
    float width_over_height = 1, height_over_width = 1;
    uint32_t samples = 0;  // patch_count * P * P
};

PatchGrid patch_grid(const PatchLaunch& l) {
    const uint64_t samples = uint64_t{l.patch_count} * l.patch_size * l.patch_size;
    if (l.patch_size == 0 || samples > UINT32_MAX || !(l.width > 0) || !(l.height > 0))
        throw Error(
            "patch sampling: P must be 1 or more, the level-0 size positive and the batch under 2^32 samples "
            "(sample fewer patches per launch)");
    PatchGrid g;
    g.per_patch = FastDivmod(l.patch_size * l.patch_size);
    g.per_row = FastDivmod(l.patch_size);
    g.inv_size = 1.0f / float(l.patch_size);
    g.width_over_height = float(double(l.width) / l.height);
    g.height_over_width = float(double(l.height) / l.width);
    g.samples = static_cast<uint32_t>(samples);
    return g;
}

// engine/sampling/patch.cpp's sample_position() and patch_gradients() in float, the level-0
// size divided out: the patch's edges along j and across it as (u, v) vectors.
__device__ SamplePlace place(const gpu::PatchGpu& p, uint32_t j, uint32_t k, const PatchGrid& g) {
    const float along_u = p.su * p.axis_x, along_v = p.su * p.axis_y * g.width_over_height;
    const float across_u = -p.sv * p.axis_y * g.height_over_width, across_v = p.sv * p.axis_x;
    const float a = (float(j) + 0.5f) * g.inv_size - 0.5f, b = (float(k) + 0.5f) * g.inv_size - 0.5f;
    return {p.cu + a * along_u + b * across_u,
            p.cv + a * along_v + b * across_v,
            along_u * g.inv_size,
            along_v * g.inv_size,
            across_u * g.inv_size,
            across_v * g.inv_size};
}

// Sample s of patch n: its C values, planes P * P apart (C is 1..4).
template <typename Out>
__device__ void store(const PatchLaunch& l, uint32_t n, uint32_t s, uint32_t per_patch, float4 value) {
    Out* out = static_cast<Out*>(l.out) + (size_t(n) * l.channels * per_patch + s);
    const float v[4] = {value.x, value.y, value.z, value.w};
#pragma unroll
    for (uint32_t c = 0; c < 4; ++c) {
        if (c >= l.channels) break;
        if constexpr (sizeof(Out) == 2) out[c * per_patch] = __float2half_rn(v[c]);
        else out[c * per_patch] = v[c];
    }
}

template <bool Layered, bool OneChannel>
__device__ float4 fetch_lod(cudaTextureObject_t t, float u, float v, int layer, float lod) {
    if constexpr (OneChannel) {
        const float r = Layered ? tex2DLayeredLod<float>(t, u, v, layer, lod) : tex2DLod<float>(t, u, v, lod);
        return make_float4(r, 0.0f, 0.0f, 1.0f);
    } else {
        return Layered ? tex2DLayeredLod<float4>(t, u, v, layer, lod) : tex2DLod<float4>(t, u, v, lod);
    }
}

template <bool Layered, bool OneChannel>
__device__ float4 fetch_grad(cudaTextureObject_t t, float u, float v, int layer, float2 dx, float2 dy) {
    if constexpr (OneChannel) {
        const float r = Layered ? tex2DLayeredGrad<float>(t, u, v, layer, dx, dy) : tex2DGrad<float>(t, u, v, dx, dy);
        return make_float4(r, 0.0f, 0.0f, 1.0f);
    } else {
        return Layered ? tex2DLayeredGrad<float4>(t, u, v, layer, dx, dy) : tex2DGrad<float4>(t, u, v, dx, dy);
    }
}

// The one kernel body: sample (j, k) of patch n, filtered by `filter`, stored as [B, N, C, P, P].
// Launched early (launch_early): what the kernel before wrote is visible after the wait.
// With l.patches_ready the records and the sample's place are ready before it, so after
// the chain a frame waits only for the texture read.
template <typename Out, class Filter>
__global__ void patch_kernel(Filter filter, PatchLaunch l, PatchGrid g) {
    if (!l.patches_ready) await_previous_kernel();
    const uint32_t index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= g.samples) return;
    uint32_t s = 0, j = 0;
    const uint32_t n = g.per_patch.divmod(index, s), k = g.per_row.divmod(s, j);
    const gpu::PatchGpu p = l.patches[n];
    const SamplePlace at = place(p, j, k, g);
    if (l.patches_ready) await_previous_kernel();
    float4 value = make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // padding slots stay zero
    if (p.level >= 0.0f) value = filter(p, at, l);
    store<Out>(l, n, s, g.per_patch.divisor, value);
}

// The texture unit: the patch level, or the footprint's gradients (anisotropic).
template <bool Layered, bool OneChannel, bool Gradients>
struct TextureFilter {
    cudaTextureObject_t texture;
    __device__ float4 operator()(const gpu::PatchGpu& p, const SamplePlace& at, const PatchLaunch&) const {
        const int layer = int(p.layer);
        if constexpr (Gradients)
            return fetch_grad<Layered, OneChannel>(texture, at.u, at.v, layer, make_float2(at.dudx, at.dvdx),
                                                   make_float2(at.dudy, at.dvdy));
        else return fetch_lod<Layered, OneChannel>(texture, at.u, at.v, layer, p.level);
    }
};

// ---- software filtering from a pyramid in global memory ----

template <bool Rgba8>
__device__ float4 texel(const SoftwarePyramid& py, int level, int layer, int x, int y) {
    const int w = py.width[level], h = py.height[level];
    x = min(max(x, 0), w - 1);
    y = min(max(y, 0), h - 1);
    const size_t i = (size_t(layer) * h + y) * w + x;
    if constexpr (Rgba8) {
        const uchar4 t = static_cast<const uchar4*>(py.levels[level])[i];
        return make_float4(t.x / 255.0f, t.y / 255.0f, t.z / 255.0f, t.w / 255.0f);
    } else {
        return static_cast<const float4*>(py.levels[level])[i];
    }
}

__device__ float4 lerp4(float4 a, float4 b, float t) {
    return make_float4(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), a.z + t * (b.z - a.z), a.w + t * (b.w - a.w));
}

template <bool Rgba8>
__device__ float4 bilinear(const SoftwarePyramid& py, int level, int layer, float u, float v) {
    const float x = u * py.width[level] - 0.5f, y = v * py.height[level] - 0.5f;
    const float fx = floorf(x), fy = floorf(y);
    const int x0 = int(fx), y0 = int(fy);
    const float a = x - fx, b = y - fy;
    const float4 top = lerp4(texel<Rgba8>(py, level, layer, x0, y0), texel<Rgba8>(py, level, layer, x0 + 1, y0), a);
    const float4 bottom = lerp4(texel<Rgba8>(py, level, layer, x0, y0 + 1),
                                texel<Rgba8>(py, level, layer, x0 + 1, y0 + 1), a);
    return lerp4(top, bottom, b);
}

template <bool Rgba8>
__device__ float4 trilinear(const SoftwarePyramid& py, int layer, float u, float v, float lod) {
    lod = fminf(fmaxf(lod, 0.0f), float(py.level_count - 1));
    const float base = floorf(lod), blend = lod - base;
    const float4 lo = bilinear<Rgba8>(py, int(base), layer, u, v);
    if (blend == 0.0f) return lo;
    return lerp4(lo, bilinear<Rgba8>(py, int(base) + 1, layer, u, v), blend);
}

// Software filtering; gradients per engine/sampling/patch.cpp gradient_footprint(): N trilinear
// taps along the longer gradient.
template <bool Rgba8, bool Gradients>
struct SoftwareFilter {
    SoftwarePyramid py;
    __device__ float4 operator()(const gpu::PatchGpu& p, const SamplePlace& at, const PatchLaunch& l) const {
        const int layer = int(p.layer);
        if constexpr (!Gradients) {
            return trilinear<Rgba8>(py, layer, at.u, at.v, p.level);
        } else {
            const float rx = hypotf(at.dudx * l.width, at.dvdx * l.height);
            const float ry = hypotf(at.dudy * l.width, at.dvdy * l.height);
            const float rmax = fmaxf(rx, ry), rmin = fminf(rx, ry);
            const float ratio = rmin > 0.0f ? ceilf(rmax / rmin - float(TVLM_RATIO_SLACK)) : float(py.max_anisotropy);
            // Magnification is one bilinear tap (engine/sampling/patch.cpp gradient_footprint()).
            const int taps = rmax <= 1.0f ? 1 : int(fminf(fmaxf(ratio, 1.0f), float(max(py.max_anisotropy, 1u))));
            const float lod = rmax > 0.0f ? log2f(rmax / taps) : 0.0f;
            const float du = rx >= ry ? at.dudx : at.dudy, dv = rx >= ry ? at.dvdx : at.dvdy;
            float4 value = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            for (int i = 1; i <= taps; ++i) {
                const float t = float(i) / float(taps + 1) - 0.5f;
                const float4 tap = trilinear<Rgba8>(py, layer, at.u + t * du, at.v + t * dv, lod);
                value = make_float4(value.x + tap.x / taps, value.y + tap.y / taps, value.z + tap.z / taps,
                                    value.w + tap.w / taps);
            }
            return value;
        }
    }
};

unsigned int blocks(const PatchGrid& g) { return (g.samples + kBlock - 1) / kBlock; }

// Launched while the kernel before it on the stream still runs (programmatic dependent
// launch); patch_kernel waits for it before reading anything. A frame's chain then hides
// this launch's latency.
template <class Filter, class Out>
void launch_early(const Filter& filter, const PatchLaunch& l, cudaStream_t stream) {
    const PatchGrid g = patch_grid(l);
    launch_kernel_early(patch_kernel<Out, Filter>, dim3(blocks(g)), dim3(kBlock), stream, true, filter, l, g);
}

template <typename Out, bool Layered, bool OneChannel>
void launch_texture(cudaTextureObject_t t, const PatchLaunch& l, cudaStream_t stream) {
    if (l.gradients) launch_early<TextureFilter<Layered, OneChannel, true>, Out>({t}, l, stream);
    else launch_early<TextureFilter<Layered, OneChannel, false>, Out>({t}, l, stream);
}

template <typename Out, bool Rgba8>
void launch_software(const SoftwarePyramid& py, const PatchLaunch& l, cudaStream_t stream) {
    const PatchGrid g = patch_grid(l);
    if (l.gradients) patch_kernel<Out><<<blocks(g), kBlock, 0, stream>>>(SoftwareFilter<Rgba8, true>{py}, l, g);
    else patch_kernel<Out><<<blocks(g), kBlock, 0, stream>>>(SoftwareFilter<Rgba8, false>{py}, l, g);
}

template <bool Rgba8>
__global__ void points_software_kernel(SoftwarePyramid py, gpu::PointSampleParams points, float4* out) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= points.count) return;
    const gpu::PointSample q = gpu::point_sample(points, i);
    out[i] = trilinear<Rgba8>(py, 0, q.u, q.v, q.lod);
}

template <typename Out>
void dispatch_texture(cudaTextureObject_t t, bool layered, uint32_t channels, const PatchLaunch& l, cudaStream_t s) {
    if (layered) {
        if (channels == 1) launch_texture<Out, true, true>(t, l, s);
        else launch_texture<Out, true, false>(t, l, s);
    } else {
        if (channels == 1) launch_texture<Out, false, true>(t, l, s);
        else launch_texture<Out, false, false>(t, l, s);
    }
}

}  // namespace

void sample_patches_texture(cudaTextureObject_t texture, bool layered, uint32_t texture_channels,
                            const PatchLaunch& launch, cudaStream_t stream) {
    if (launch.patch_count == 0) return;
    if (launch.half) dispatch_texture<__half>(texture, layered, texture_channels, launch, stream);
    else dispatch_texture<float>(texture, layered, texture_channels, launch, stream);
}

void sample_points_software(const SoftwarePyramid& pyramid, const gpu::PointSampleParams& points, float4* out,
                            cudaStream_t stream) {
    if (points.count == 0) return;
    const uint32_t grid = (points.count + TVLM_POINT_GROUP_SIZE - 1) / TVLM_POINT_GROUP_SIZE;
    if (pyramid.rgba8) points_software_kernel<true><<<grid, TVLM_POINT_GROUP_SIZE, 0, stream>>>(pyramid, points, out);
    else points_software_kernel<false><<<grid, TVLM_POINT_GROUP_SIZE, 0, stream>>>(pyramid, points, out);
}

void sample_patches_software(const SoftwarePyramid& pyramid, const PatchLaunch& launch, cudaStream_t stream) {
    if (launch.patch_count == 0) return;
    if (launch.half) {
        if (pyramid.rgba8) launch_software<__half, true>(pyramid, launch, stream);
        else launch_software<__half, false>(pyramid, launch, stream);
    } else {
        if (pyramid.rgba8) launch_software<float, true>(pyramid, launch, stream);
        else launch_software<float, false>(pyramid, launch, stream);
    }
}

}  // namespace tvlm
