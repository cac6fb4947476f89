#pragma once
// Kernels that read textures for checking and measuring the interop: every texel centre
// of one level, frame stamps for the ordering test, and a batch of trilinear samples.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "shaders/point_samples.h"

namespace tvlm {

// Reads texel centres ((x+0.5)/w, (y+0.5)/h) of `level` (of `layer` when layered) with
// tex2DLod / tex2DLayeredLod into out[(y * width + x) * channels + c] (channels 4 or 1).
struct LevelRead {
    cudaTextureObject_t texture = 0;
    int level = 0, layer = 0;
    bool layered = false;
    int width = 0, height = 0, channels = 4;
    float* out = nullptr;  // device memory, width * height * channels floats
};
void read_level(const LevelRead& read, cudaStream_t stream);

// Counts texels of every level whose RGB bytes differ from the frame stamp
// (frame & 255, (frame >> 8) & 255, (frame >> 16) & 255): a stale or torn frame shows up.
struct StampCheck {
    cudaTextureObject_t texture = 0;
    int width = 0, height = 0, levels = 0;
    uint32_t frame = 0;
    unsigned int* mismatches = nullptr;  // device counter, incremented
};
void count_stamp_mismatches(const StampCheck& check, cudaStream_t stream);

// Trilinear samples at per-sample LOD (shaders/point_samples.h says where each reads): the
// work a sampling kernel does, for benchmarks. Writes a float4 per sample, in sample order.
struct PointSampling {
    cudaTextureObject_t texture = 0;
    gpu::PointSampleParams points{};
    float4* out = nullptr;  // device memory, points.count float4
    // Each block's samples sorted by mip level before sampling (same results, same order):
    // faster on 16x16 tiles, slower on scattered positions (docs/benchmarks.md, "Patch sampling").
    bool group_by_level = false;
};
void sample_points(const PointSampling& sampling, cudaStream_t stream);

// Writes (x & 255, y & 255, tag, 255) into every texel of an RGBA8 level through a
// surface object: CUDA producing texture content that Vulkan then reads.
struct SurfacePattern {
    cudaSurfaceObject_t surface = 0;
    int width = 0, height = 0;
    unsigned char tag = 0;
};
void write_surface_pattern(const SurfacePattern& pattern, cudaStream_t stream);

}  // namespace tvlm
