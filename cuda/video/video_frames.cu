#include "cuda/video/video_frames.h"

#include <string>

#include "cuda/cuda_check.h"
#include "engine/error.h"
#include "shaders/shader_params.h"

namespace tvlm {

namespace {

// Normalized YUV -> RGB of one matrix and range, as multiply-adds on the bytes.
struct YuvToRgb {
    float y_scale, y_offset, c_scale;  // y = (Y - offset) * scale; c = (C - 128) * c_scale
    float r_v, g_u, g_v, b_u;          // R = y + r_v v; G = y + g_u u + g_v v; B = y + b_u u
};

YuvToRgb yuv_to_rgb(YuvMatrix matrix, bool full_range) {
    const YuvCoefficients k = yuv_coefficients(matrix);
    const float kg = 1.0f - k.kr - k.kb;
    YuvToRgb t{};
    t.y_scale = full_range ? 1.0f / 255.0f : 1.0f / 219.0f;
    t.y_offset = full_range ? 0.0f : 16.0f;
    t.c_scale = full_range ? 1.0f / 255.0f : 1.0f / 224.0f;
    t.r_v = 2.0f * (1.0f - k.kr);
    t.b_u = 2.0f * (1.0f - k.kb);
    t.g_u = -2.0f * k.kb * (1.0f - k.kb) / kg;
    t.g_v = -2.0f * k.kr * (1.0f - k.kr) / kg;
    return t;
}

__device__ unsigned int to_byte(float v) { return unsigned(fminf(fmaxf(v, 0.0f), 1.0f) * 255.0f + 0.5f); }

// One thread per texel: its chroma bilinearly from the four nearest chroma samples, one word store.
__global__ void nv12_kernel(Nv12Frame f, YuvToRgb t, uint8_t* rgba, size_t rgba_pitch) {
    const uint32_t x = (blockIdx.x * blockDim.x + threadIdx.x), y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= f.width || y >= f.height) return;
    // Chroma of row y lies between chroma rows: (y - 0.5) / 2, clamped; columns co-sited with even x.
    const uint32_t chroma_w = (f.width + 1) / 2, chroma_h = (f.height + 1) / 2;
    const float cy = fmaxf((float(y) - 0.5f) * 0.5f, 0.0f);
    const uint32_t r0 = min(uint32_t(cy), chroma_h - 1), r1 = min(r0 + 1, chroma_h - 1);
    const float wy = cy - float(r0);
    const float cx = float(x) * 0.5f;
    const uint32_t c0 = min(uint32_t(cx), chroma_w - 1), c1 = min(c0 + 1, chroma_w - 1);
    const float wx = cx - float(c0);
    const uint8_t* row0 = f.chroma + r0 * f.chroma_pitch;
    const uint8_t* row1 = f.chroma + r1 * f.chroma_pitch;
    auto sample = [&](uint32_t k) {
        const float top = float(row0[2 * c0 + k]) * (1.0f - wx) + float(row0[2 * c1 + k]) * wx;
        const float bottom = float(row1[2 * c0 + k]) * (1.0f - wx) + float(row1[2 * c1 + k]) * wx;
        return (top * (1.0f - wy) + bottom * wy - 128.0f) * t.c_scale;
    };
    const float u = sample(0), v = sample(1);
    const float luma = (float(f.luma[y * f.luma_pitch + x]) - t.y_offset) * t.y_scale;
    const unsigned int word = to_byte(luma + t.r_v * v) | (to_byte(luma + t.g_u * u + t.g_v * v) << 8) |
                              (to_byte(luma + t.b_u * u) << 16) | (255u << 24);
    *reinterpret_cast<unsigned int*>(rgba + y * rgba_pitch + 4 * x) = word;
}

// Texel i of a tile, in an order where the 32 texels of a warp's access are 16 of each of
// two neighbouring rows: a sector of a CUDA array's block-linear layout is 16 bytes of two
// rows, and a warp reading or writing 32 texels of one row touched half of each sector.
static_assert(TVLM_CHANGE_TILE == 32 && TVLM_CHANGE_THREADS % 32 == 0,
              "tile_texel maps warps to 16 x 2 texels of a 32-texel tile");
__device__ uint2 tile_texel(uint32_t i) {
    const uint32_t lane = i % 32, step = i / 32;
    return make_uint2((step % 2) * 16 + lane % 16, (step / 2) * 2 + lane / 16);
}

// One block of TVLM_CHANGE_THREADS per tile: each thread compares four texels. kCopy: a
// changed tile's texels are then written into level 0 from the registers they were
// compared in (a second kernel read the frame's changed tiles again, and cost a launch).
constexpr uint32_t kTexelsPerThread = TVLM_CHANGE_TILE * TVLM_CHANGE_TILE / TVLM_CHANGE_THREADS;
static_assert(kTexelsPerThread * TVLM_CHANGE_THREADS == TVLM_CHANGE_TILE * TVLM_CHANGE_TILE, "whole texels per thread");

template <bool kCopy>
__global__ void changed_tiles_kernel(const uint8_t* frame, size_t pitch, cudaSurfaceObject_t level0, uint32_t width,
                                     uint32_t height, uint32_t threshold, uint32_t* changed) {
    const uint32_t tile_x = blockIdx.x, tile_y = blockIdx.y;
    uchar4 now[kTexelsPerThread];
    bool differs = false;
#pragma unroll
    for (uint32_t k = 0; k < kTexelsPerThread; ++k) {
        const uint2 at = tile_texel(threadIdx.x + k * TVLM_CHANGE_THREADS);
        const uint32_t x = tile_x * TVLM_CHANGE_TILE + at.x, y = tile_y * TVLM_CHANGE_TILE + at.y;
        if (x >= width || y >= height) continue;
        now[k] = *reinterpret_cast<const uchar4*>(frame + y * pitch + 4 * x);
        const uchar4 held = surf2Dread<uchar4>(level0, int(4 * x), int(y));
        differs |= uint32_t(abs(int(now[k].x) - int(held.x))) > threshold ||
                   uint32_t(abs(int(now[k].y) - int(held.y))) > threshold ||
                   uint32_t(abs(int(now[k].z) - int(held.z))) > threshold ||
                   uint32_t(abs(int(now[k].w) - int(held.w))) > threshold;
    }
    const int any = __syncthreads_or(differs);
    if (threadIdx.x == 0) changed[tile_y * gridDim.x + tile_x] = any ? 1u : 0u;
    if constexpr (kCopy) {
        if (!any) return;
#pragma unroll
        for (uint32_t k = 0; k < kTexelsPerThread; ++k) {
            const uint2 at = tile_texel(threadIdx.x + k * TVLM_CHANGE_THREADS);
            const uint32_t x = tile_x * TVLM_CHANGE_TILE + at.x, y = tile_y * TVLM_CHANGE_TILE + at.y;
            if (x < width && y < height) surf2Dwrite(now[k], level0, int(4 * x), int(y));
        }
    }
}

template <bool kCopy>
void launch_changed_tiles(const char* name, const uint8_t* frame, size_t pitch, cudaSurfaceObject_t level0,
                          uint32_t width, uint32_t height, uint32_t threshold, uint32_t* changed, cudaStream_t stream) {
    if (!frame || !changed || width == 0 || height == 0 || pitch < size_t{4} * width)
        throw Error(std::string(name) + ": a null pointer, an empty frame or a short pitch");
    const dim3 grid((width + TVLM_CHANGE_TILE - 1) / TVLM_CHANGE_TILE,
                    (height + TVLM_CHANGE_TILE - 1) / TVLM_CHANGE_TILE);
    changed_tiles_kernel<kCopy>
        <<<grid, TVLM_CHANGE_THREADS, 0, stream>>>(frame, pitch, level0, width, height, threshold, changed);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void nv12_to_rgba8(const Nv12Frame& frame, uint8_t* rgba, size_t rgba_pitch, cudaStream_t stream) {
    if (!frame.luma || !frame.chroma || !rgba) throw Error("nv12_to_rgba8: a null frame or output pointer");
    if (frame.width == 0 || frame.height == 0) throw Error("nv12_to_rgba8: an empty frame");
    if (frame.luma_pitch < frame.width || frame.chroma_pitch < 2 * ((frame.width + 1) / 2) ||
        rgba_pitch < size_t{4} * frame.width || rgba_pitch % 4)
        throw Error("nv12_to_rgba8: pitches of " + std::to_string(frame.luma_pitch) + ", " +
                    std::to_string(frame.chroma_pitch) + " and " + std::to_string(rgba_pitch) +
                    " bytes are short for " + std::to_string(frame.width) + " texels (the output's a multiple of 4)");
    const dim3 block(32, 8), grid((frame.width + 31) / 32, (frame.height + 7) / 8);
    nv12_kernel<<<grid, block, 0, stream>>>(frame, yuv_to_rgb(frame.matrix, frame.full_range), rgba, rgba_pitch);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

void find_changed_tiles(const uint8_t* frame, size_t pitch, cudaSurfaceObject_t level0, uint32_t width, uint32_t height,
                        uint32_t threshold, uint32_t* changed, cudaStream_t stream) {
    launch_changed_tiles<false>("find_changed_tiles", frame, pitch, level0, width, height, threshold, changed, stream);
}

void update_changed_tiles(const uint8_t* frame, size_t pitch, cudaSurfaceObject_t level0, uint32_t width,
                          uint32_t height, uint32_t threshold, uint32_t* changed, cudaStream_t stream) {
    launch_changed_tiles<true>("update_changed_tiles", frame, pitch, level0, width, height, threshold, changed, stream);
}

}  // namespace tvlm
