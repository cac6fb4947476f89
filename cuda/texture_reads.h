#pragma once
// Kernels that read textures for checking and measuring the interop: every texel centre
// of one level, frame stamps for the ordering test, and a batch of trilinear samples.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

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

// n trilinear samples at per-sample LOD in [0, max_lod]: the work a sampling kernel does,
// for benchmarks. Writes float4 per sample. Positions are hashed per sample (scattered), or
// with `coherent` in 16x16 tiles at hashed centres, neighbours 2^lod texels apart (how
// patches read).
struct PointSampling {
    cudaTextureObject_t texture = 0;
    int count = 0;
    float max_lod = 0.0f;
    uint32_t seed = 0;
    float4* out = nullptr;
    bool coherent = false;
    float texel = 0.0f;  // 1 / level-0 width, for coherent tiles
    // Each block's samples sorted by mip level before sampling (same results, same order):
    // 10% faster on coherent tiles, 7% slower on scattered positions (H200, 1024^2).
    bool group_by_level = false;
};
void sample_points(const PointSampling& sampling, cudaStream_t stream);

#ifdef __CUDACC__
#define TVLM_HOST_DEVICE __host__ __device__
#else
#define TVLM_HOST_DEVICE
#endif

// Where sample i of `sampling` reads: the kernels and the tests share this.
struct PointSample {
    float u = 0, v = 0, lod = 0;
};
TVLM_HOST_DEVICE inline uint32_t point_hash(uint32_t x) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    return x;
}
TVLM_HOST_DEVICE inline PointSample point_sample(const PointSampling& p, uint32_t i) {
    const auto unit = [](uint32_t bits16) { return static_cast<float>(bits16) * (1.0f / 65536.0f); };
    const uint32_t h = point_hash(i ^ p.seed);
    const float lod = unit(point_hash(h) & 0xffffu) * p.max_lod;
    if (!p.coherent) return {unit(h & 0xffffu), unit(h >> 16), lod};
    const uint32_t tile = point_hash((i >> 8) ^ p.seed);
    const float step = p.texel * exp2f(lod);
    return {unit(tile & 0xffffu) + (static_cast<float>(i & 15) - 7.5f) * step,
            unit(tile >> 16) + (static_cast<float>((i >> 4) & 15) - 7.5f) * step, lod};
}

// Writes (x & 255, y & 255, tag, 255) into every texel of an RGBA8 level through a
// surface object: CUDA producing texture content that Vulkan then reads.
struct SurfacePattern {
    cudaSurfaceObject_t surface = 0;
    int width = 0, height = 0;
    unsigned char tag = 0;
};
void write_surface_pattern(const SurfacePattern& pattern, cudaStream_t stream);

}  // namespace tvlm
