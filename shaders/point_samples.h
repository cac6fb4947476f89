// The point-sampling job of `tvlm bench sample` ("1M trilinear samples at per-sample LOD"):
// where sample i reads, written once for GLSL (shaders/sample_points.comp), CUDA
// (cuda/sampling/texture_reads.cu, cuda/sampling/patch_sampling.cu) and C++ (the tests' reference). The
// points are hashed from their index, so no input buffer is read.
#ifndef TVLM_POINT_SAMPLES_H
#define TVLM_POINT_SAMPLES_H

#ifdef __cplusplus
#include <cmath>
#include <cstdint>
#ifdef __CUDACC__
#define TVLM_SHARED_FN inline __host__ __device__
#else
#define TVLM_SHARED_FN inline
#endif
#define TVLM_EXP2 exp2f
namespace tvlm::gpu {
using uint = uint32_t;
#else
#define TVLM_SHARED_FN
#define TVLM_EXP2 exp2
#endif

// Threads per block (CUDA) and invocations per workgroup (Vulkan). 128: a little faster than
// 256 and 512 for the CUDA kernel (a sweep of the three).
#define TVLM_POINT_GROUP_SIZE 128

// Push constants of sample_points.comp; the CUDA kernels take the same numbers.
struct PointSampleParams {
    uint count;     // samples
    float max_lod;  // LODs are hashed in [0, max_lod]
    uint seed;
    uint tiles;   // 1: 256 consecutive samples on a 16x16 grid, neighbours 2^lod texels apart
    float texel;  // 1 / level-0 width (tiles)
    uint pad0;
    uint pad1;
    uint pad2;
};

struct PointSample {
    float u;
    float v;
    float lod;
};

TVLM_SHARED_FN uint point_hash(uint x) {
    x ^= x >> 16u;
    x *= 0x7feb352du;
    x ^= x >> 15u;
    x *= 0x846ca68bu;
    x ^= x >> 16u;
    return x;
}

TVLM_SHARED_FN float unit16(uint bits) { return float(bits & 0xffffu) * (1.0f / 65536.0f); }

// Sample i: a hashed LOD; a hashed position ("scattered"), or a 16x16 grid of 256
// consecutive samples around a hashed centre, neighbours 2^lod level-0 texels apart.
TVLM_SHARED_FN PointSample point_sample(PointSampleParams p, uint i) {
    PointSample s;
    const uint h = point_hash(i ^ p.seed);
    s.lod = unit16(point_hash(h)) * p.max_lod;
    if (p.tiles == 0u) {
        s.u = unit16(h);
        s.v = unit16(h >> 16u);
        return s;
    }
    const uint tile = point_hash((i >> 8u) ^ p.seed);
    const float step = p.texel * TVLM_EXP2(s.lod);
    s.u = unit16(tile) + (float(i & 15u) - 7.5f) * step;
    s.v = unit16(tile >> 16u) + (float((i >> 4u) & 15u) - 7.5f) * step;
    return s;
}

#ifdef __cplusplus
static_assert(sizeof(PointSampleParams) == 32, "push constant layout must match GLSL");
}  // namespace tvlm::gpu
#endif

#endif
