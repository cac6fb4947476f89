// Parameter structs shared by GLSL (push constants), CUDA and C++: written once here.
// GLSL sees plain `uint`/`float`; C++ and CUDA get the same layout through the typedefs.
#ifndef TVLM_SHADER_PARAMS_H
#define TVLM_SHADER_PARAMS_H

#ifdef __cplusplus
#include <cstdint>
namespace tvlm::gpu {
using uint = uint32_t;
#endif

// The single-pass box downsampler (shaders/box_mips.comp, cuda/mips/box_mips.cu): a workgroup
// of TVLM_BOX_THREADS owns a TILE x TILE tile of the first level it writes (a 64x64 source
// tile when the ratio is 2:1), writes it, and reduces it in shared memory down to 1x1:
// up to TVLM_BOX_MAX_LEVELS levels per dispatch. The host plans the passes (mips_box.cpp).
#define TVLM_BOX_THREADS 256
#define TVLM_BOX_TILE 32
#define TVLM_BOX_MAX_LEVELS 6

// How texels are averaged and rounded (engine/mips/box_filter.h has the arithmetic).
#define TVLM_BOX_UNORM8 0u
#define TVLM_BOX_SRGB8 1u
#define TVLM_BOX_FLOAT16 2u
#define TVLM_BOX_FLOAT32 3u
// UNORM8 levels whose taps' weights sum to at most this sum in float instead of double:
// every sum of bytes times weights, 2n + d and (q + 1) 2d of the half-up rounding are then
// whole numbers under 2^24, held exactly (box_mips.comp, cuda/mips/box_mips.cu).
#define TVLM_BOX_FLOAT_EXACT_WEIGHTS 16384u

struct BoxMipsParams {
    uint src_width;  // level a, read; level a+1 is max(1, size >> 1), any ratio
    uint src_height;
    uint levels;  // levels a+1 .. a+levels written; every step after the first is 2:1
    uint kind;    // TVLM_BOX_*
    uint tile_x;  // first tile of the dispatch in tiles of level a+1 (partial updates)
    uint tile_y;
    uint first_layer;  // layer of workgroup z = 0
    uint tail;         // Vulkan: 1 = one workgroup writes levels a+1 .. a+levels, any ratio each
};

// Anisotropic taps = ceil(rho_max / rho_min - TVLM_RATIO_SLACK): patch records are float32,
// so a ratio that is an integer in exact arithmetic lands within ~1e-7 of it and must not
// round up to one tap more (a resize at scale 1 has ratio 1: one tap, exact texels).
#define TVLM_RATIO_SLACK 1e-5

// Workgroup of the patch samplers: one invocation per output sample.
#define TVLM_SAMPLE_GROUP_SIZE 256

// One patch as every sampler reads it (std430: 32 bytes). Sample (j, k) of a P x P patch
// sits at the centre plus ((j+0.5)/P - 0.5) * su along the patch axis and
// ((k+0.5)/P - 0.5) * sv across it; the axis is a unit vector in pixel space, so (1, 0)
// gives u = cu + ((j+0.5)/P - 0.5) * su exactly (engine/sampling/patch.h has the whole rule).
struct PatchGpu {
    float cu;
    float cv;
    float su;      // footprint extent along the axis, in units of the level-0 width
    float sv;      // footprint extent across the axis, in units of the level-0 height
    float level;   // LOD for explicit-level sampling; < 0 marks a padding slot (zeros)
    float axis_x;  // unit direction of the patch's j axis in pixel space
    float axis_y;
    uint layer;  // array layer: the image of the batch
};

// n / d for a 32-bit n and a run-time divisor d >= 1, as a multiply-high, adds and shifts
// (Granlund and Montgomery; Hacker's Delight 10-9): shift = ceil(log2 d), multiplier =
// floor(2^32 (2^shift - d) / d) + 1. Built on the host (make_divisor); divided by
// shaders/divide.glsl and cuda/fast_divmod.h. Kernels that map a flat index to a place by
// sizes known only at launch otherwise spend most of their instructions dividing.
struct DivisorGpu {
    uint multiplier;
    uint shift;
};

// Push constants of the Vulkan patch sampler (the CUDA kernels take the same numbers).
struct PatchSampleParams {
    uint patch_count;  // patches over the whole batch
    uint patch_size;   // P
    uint channels;     // C written per sample: 3 or 4
    uint gradients;    // 1: textureGrad from the footprint (anisotropic); 0: textureLod(level)
    float width;       // level-0 extent in texels (the pixel space of the axis)
    float height;
    DivisorGpu per_patch;  // P * P
    DivisorGpu per_row;    // P
};

// Frame differencing (shaders/frame_changes.comp): a workgroup of TVLM_CHANGE_THREADS
// compares one TVLM_CHANGE_TILE x TVLM_CHANGE_TILE tile of a new RGBA8 frame with level 0
// of the texture and writes 1 for the tile where some channel of some texel differs by
// more than the threshold, else 0 (engine/video/changed_tiles.h has the rule).
#define TVLM_CHANGE_TILE 32
#define TVLM_CHANGE_THREADS 256

struct FrameChangeParams {
    uint width;  // level-0 extent in texels
    uint height;
    uint tiles_x;  // ceil(width / TVLM_CHANGE_TILE)
    uint tiles_y;
    uint threshold;  // the largest difference of a byte that still counts as unchanged
    uint pad0;
    uint pad1;
    uint pad2;
};

// The KNN graph's nearest neighbours on the GPU (shaders/knn_nearest.comp): an invocation
// per point, up to TVLM_KNN_MAX neighbours kept (k + hysteresis).
#define TVLM_KNN_THREADS 128
#define TVLM_KNN_MAX 16

struct KnnParams {
    uint count;       // points
    uint neighbours;  // kept per point, 1..TVLM_KNN_MAX, below count
    uint pad0;
    uint pad1;
};

#ifdef __cplusplus
constexpr DivisorGpu make_divisor(uint d) {
    uint shift = 0;
    while ((uint64_t{1} << shift) < d) ++shift;
    return {static_cast<uint>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1), shift};
}

static_assert(sizeof(KnnParams) == 16, "push constant layout must match GLSL");
static_assert(sizeof(FrameChangeParams) == 32, "push constant layout must match GLSL");
static_assert(sizeof(BoxMipsParams) == 32, "push constant layout must match GLSL");
static_assert(sizeof(PatchGpu) == 32, "std430 layout must match GLSL");
static_assert(sizeof(PatchSampleParams) == 40, "push constant layout must match GLSL");
}  // namespace tvlm::gpu
#endif

#endif
