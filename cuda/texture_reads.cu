#include "texture_reads.h"

namespace tvlm {

namespace {

constexpr int kBlock = 256;

int blocks(long long n) { return static_cast<int>((n + kBlock - 1) / kBlock); }

__global__ void read_level_kernel(LevelRead r) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= r.width * r.height) return;
    const float u = ((i % r.width) + 0.5f) / r.width, v = ((i / r.width) + 0.5f) / r.height;
    const float lod = static_cast<float>(r.level);
    float* out = r.out + static_cast<long long>(i) * r.channels;
    if (r.channels == 1) {
        out[0] = r.layered ? tex2DLayeredLod<float>(r.texture, u, v, r.layer, lod) : tex2DLod<float>(r.texture, u, v, lod);
        return;
    }
    const float4 t = r.layered ? tex2DLayeredLod<float4>(r.texture, u, v, r.layer, lod)
                               : tex2DLod<float4>(r.texture, u, v, lod);
    out[0] = t.x; out[1] = t.y; out[2] = t.z; out[3] = t.w;
}

__global__ void stamp_kernel(StampCheck s) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float expected[3] = {static_cast<float>(s.frame & 255u), static_cast<float>((s.frame >> 8) & 255u),
                               static_cast<float>((s.frame >> 16) & 255u)};
    unsigned int bad = 0;
    for (int level = 0; level < s.levels; ++level) {
        const int w = max(1, s.width >> level), h = max(1, s.height >> level);
        if (i >= w * h) break;
        const float4 t = tex2DLod<float4>(s.texture, ((i % w) + 0.5f) / w, ((i / w) + 0.5f) / h, static_cast<float>(level));
        bad += rintf(t.x * 255.0f) != expected[0] || rintf(t.y * 255.0f) != expected[1] ||
               rintf(t.z * 255.0f) != expected[2];
    }
    if (bad) atomicAdd(s.mismatches, bad);
}

__device__ uint32_t hash(uint32_t x) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    return x;
}

__global__ void sample_points_kernel(PointSampling p) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.count) return;
    const uint32_t h = hash(static_cast<uint32_t>(i) ^ p.seed);
    const float lod = (hash(h) & 0xffffu) * (p.max_lod / 65536.0f);
    float u = (h & 0xffffu) * (1.0f / 65536.0f), v = (h >> 16) * (1.0f / 65536.0f);
    if (p.coherent) {
        const uint32_t tile = hash(static_cast<uint32_t>(i >> 8) ^ p.seed);
        const float step = p.texel * exp2f(lod);
        u = (tile & 0xffffu) * (1.0f / 65536.0f) + ((i & 15) - 7.5f) * step;
        v = (tile >> 16) * (1.0f / 65536.0f) + (((i >> 4) & 15) - 7.5f) * step;
    }
    p.out[i] = tex2DLod<float4>(p.texture, u, v, lod);
}

__global__ void surface_pattern_kernel(SurfacePattern p) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.width * p.height) return;
    const int x = i % p.width, y = i / p.width;
    const uchar4 v = make_uchar4(static_cast<unsigned char>(x & 255), static_cast<unsigned char>(y & 255), p.tag, 255);
    surf2Dwrite(v, p.surface, x * static_cast<int>(sizeof(uchar4)), y);
}

}  // namespace

void write_surface_pattern(const SurfacePattern& p, cudaStream_t stream) {
    surface_pattern_kernel<<<blocks(static_cast<long long>(p.width) * p.height), kBlock, 0, stream>>>(p);
}

void read_level(const LevelRead& r, cudaStream_t stream) {
    read_level_kernel<<<blocks(static_cast<long long>(r.width) * r.height), kBlock, 0, stream>>>(r);
}

void count_stamp_mismatches(const StampCheck& s, cudaStream_t stream) {
    stamp_kernel<<<blocks(static_cast<long long>(s.width) * s.height), kBlock, 0, stream>>>(s);
}

void sample_points(const PointSampling& p, cudaStream_t stream) {
    sample_points_kernel<<<blocks(p.count), kBlock, 0, stream>>>(p);
}

}  // namespace tvlm
