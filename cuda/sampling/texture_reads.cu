#include "cuda/sampling/texture_reads.h"

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
        out[0] = r.layered ? tex2DLayeredLod<float>(r.texture, u, v, r.layer, lod)
                           : tex2DLod<float>(r.texture, u, v, lod);
        return;
    }
    const float4 t = r.layered ? tex2DLayeredLod<float4>(r.texture, u, v, r.layer, lod)
                               : tex2DLod<float4>(r.texture, u, v, lod);
    out[0] = t.x;
    out[1] = t.y;
    out[2] = t.z;
    out[3] = t.w;
}

__global__ void stamp_kernel(StampCheck s) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float expected[3] = {static_cast<float>(s.frame & 255u), static_cast<float>((s.frame >> 8) & 255u),
                               static_cast<float>((s.frame >> 16) & 255u)};
    unsigned int bad = 0;
    for (int level = 0; level < s.levels; ++level) {
        const int w = max(1, s.width >> level), h = max(1, s.height >> level);
        if (i >= w * h) break;
        const float4 t = tex2DLod<float4>(s.texture, ((i % w) + 0.5f) / w, ((i / w) + 0.5f) / h,
                                          static_cast<float>(level));
        bad += rintf(t.x * 255.0f) != expected[0] || rintf(t.y * 255.0f) != expected[1] ||
               rintf(t.z * 255.0f) != expected[2];
    }
    if (bad) atomicAdd(s.mismatches, bad);
}

constexpr int kPointBlock = TVLM_POINT_GROUP_SIZE;

__global__ void __launch_bounds__(kPointBlock) sample_points_kernel(PointSampling p) {
    const uint32_t i = blockIdx.x * kPointBlock + threadIdx.x;
    if (i >= p.points.count) return;
    const gpu::PointSample q = gpu::point_sample(p.points, i);
    p.out[i] = tex2DLod<float4>(p.texture, q.u, q.v, q.lod);
}

// The same samples, each block's grouped by mip level first (a counting sort in shared
// memory), so a warp's samples read one or two levels: the texture unit then fetches the
// neighbours in a level together instead of 32 footprints in up to 11 levels. Results go
// back to sample order through shared memory, for coalesced writes (writing each result
// straight to its place took 40% longer).
__global__ void __launch_bounds__(kPointBlock) sample_points_grouped_kernel(PointSampling p) {
    __shared__ uint32_t level_counts[16];
    __shared__ uint16_t sorted[kPointBlock];  // sample (within the block) taken by each thread
    __shared__ float4 results[kPointBlock];
    const int t = static_cast<int>(threadIdx.x), first = static_cast<int>(blockIdx.x) * kPointBlock;
    const int count = static_cast<int>(p.points.count);
    // Threads past the end sample the last point again (no branch around the sort or the
    // fetch: a guarded form measured 7% slower) and write nothing.
    const auto sample = [&](int k) {
        return gpu::point_sample(p.points, static_cast<uint32_t>(min(first + k, count - 1)));
    };
    if (t < 16) level_counts[t] = 0;
    __syncthreads();
    const int level = min(15, static_cast<int>(sample(t).lod));
    const uint32_t rank = atomicAdd(&level_counts[level], 1u);
    __syncthreads();
    uint32_t slot = rank;
    for (int k = 0; k < level; ++k) slot += level_counts[k];
    sorted[slot] = static_cast<uint16_t>(t);
    __syncthreads();
    const int mine = sorted[t];
    const gpu::PointSample q = sample(mine);
    results[mine] = tex2DLod<float4>(p.texture, q.u, q.v, q.lod);
    __syncthreads();
    if (first + t < count) p.out[first + t] = results[t];
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
    const int grid = static_cast<int>((p.points.count + kPointBlock - 1) / kPointBlock);
    if (p.group_by_level) sample_points_grouped_kernel<<<grid, kPointBlock, 0, stream>>>(p);
    else sample_points_kernel<<<grid, kPointBlock, 0, stream>>>(p);
}

}  // namespace tvlm
