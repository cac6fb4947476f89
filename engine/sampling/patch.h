#pragma once
// Patches and patch layouts: where the P x P samples of each patch sit (design.md,
// "Semantics every backend shares"). Every sampler (CUDA, Vulkan compute, CPU reference)
// reads the same Patch records and places samples by sample_position().
#include <cstdint>
#include <string_view>
#include <vector>

#include "shaders/shader_params.h"

namespace tvlm {

using Patch = gpu::PatchGpu;

inline constexpr uint32_t kMaxPatchSize = 64;
inline constexpr uint32_t kMaxAnisotropy = 16;  // every backend's sampler uses this

// level: textureLod / tex2DLod at Patch::level (level grids, foveated layouts).
// gradients: textureGrad / tex2DGrad with the footprint's sample spacing as gradients, so
// the texture unit picks the level and filters an elongated footprint (anisotropic).
enum class SamplingMode : uint8_t { level, gradients };
std::string_view sampling_mode_name(SamplingMode mode);

// Patches for a batch: `images` runs of `patches_per_image` slots, image b on layer b.
struct PatchLayout {
    std::string_view kind;           // "grid", "foveated", "anisotropic"
    uint32_t width = 0, height = 0;  // level-0 texels of every image
    uint32_t patch_size = 16;
    uint32_t images = 1;
    uint32_t patches_per_image = 0;  // N; padding slots (level < 0) included
    uint32_t levels_needed = 1;      // the texture must have at least this many mip levels
    SamplingMode mode = SamplingMode::level;
    std::vector<Patch> patches;  // images * patches_per_image, image-major

    size_t samples() const { return patches.size() * size_t{patch_size} * patch_size; }
    // Floats of the output [B, N, C, P, P] and of the metadata [B, N, 5].
    size_t output_values(uint32_t channels) const { return samples() * channels; }
    size_t metadata_values() const { return patches.size() * 5; }
    // Whether `other` samples the same places the same way (a sampler made for one serves
    // the other: video paths keep their sampler while the fixation stays).
    bool same_sampling(const PatchLayout& other) const;
};

struct PatchOutput {
    uint32_t channels = 4;  // C: 3 or 4
    bool half = false;      // float16 instead of float32

    size_t bytes(const PatchLayout& layout) const { return layout.output_values(channels) * (half ? 2 : 4); }
};

// Throws Error unless a texture of width x height with `levels` mip levels and `layers`
// layers can serve `layout`, and `output_bytes` is exactly the output's size: what every
// GPU sampler checks before it launches anything.
void check_patch_target(const PatchLayout& layout, const PatchOutput& output, uint32_t width, uint32_t height,
                        uint32_t levels, uint32_t layers, size_t output_bytes);

// The metadata rows (cu, cv, su, sv, level) of every slot; padding slots are all zero
// except level = -1.
std::vector<float> patch_metadata(const PatchLayout& layout);

// Throws Error unless 1 <= patch_size <= kMaxPatchSize and the image is not empty.
void check_patch_geometry(uint32_t width, uint32_t height, uint32_t patch_size);

struct SamplePosition {
    double u, v;
};
// Normalized position of sample (j, k): the centre plus ((j+0.5)/P - 0.5) * su * W pixels
// along the axis and ((k+0.5)/P - 0.5) * sv * H pixels across it (axis (1, 0): plain u, v).
SamplePosition sample_position(const Patch& patch, uint32_t j, uint32_t k, uint32_t patch_size, uint32_t width,
                               uint32_t height);

// The normalized change of (u, v) from one sample to the next along j (x) and k (y): the
// gradients handed to textureGrad / tex2DGrad in SamplingMode::gradients.
struct Gradients {
    double dudx, dvdx, dudy, dvdy;
};
Gradients patch_gradients(const Patch& patch, uint32_t patch_size, uint32_t width, uint32_t height);

// What a texture unit does with gradients, as the Vulkan spec defines it ("Scale Factor
// Operation, Level-of-Detail Operation"): rho_x, rho_y = the gradients' lengths in level-0
// texels; taps N = min(ceil(rho_max / rho_min - TVLM_RATIO_SLACK), kMaxAnisotropy), or 1 when
// rho_max <= 1 (magnification); lod = log2(rho_max / N);
// the N trilinear taps sit at (i / (N + 1) - 1/2), i = 1..N, along the longer gradient and
// are averaged. Where the taps go is implementation-defined; this is the reference's rule.
struct GradientFootprint {
    double lod;
    uint32_t taps;
    bool major_is_x;  // the taps step along the j gradient (else along k)
};
GradientFootprint gradient_footprint(const Gradients& gradients, uint32_t width, uint32_t height,
                                     uint32_t max_anisotropy = kMaxAnisotropy);

}  // namespace tvlm
