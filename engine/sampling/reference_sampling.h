#pragma once
// CPU reference of the patch samplers: the definition every GPU backend is tested against,
// in double precision. Bilinear within a level with clamp-to-edge addressing, linear
// between levels (LOD clamped to [0, levels - 1]), sRGB colour channels decoded to linear
// light before filtering (as sRGB samplers return them), one-channel formats read as
// (r, 0, 0, 1). SamplingMode::gradients follows gradient_footprint() (patch.h).
#include <array>
#include <span>
#include <vector>

#include "engine/textures/format.h"
#include "engine/textures/image.h"
#include "engine/sampling/patch.h"

namespace tvlm {

// The mip levels of one image as stored on the GPU (texel values as read back).
using MipLevels = std::vector<ImageF>;

std::array<double, 4> reference_trilinear(const MipLevels& levels, Format format, double u, double v, double lod);

// Output [B, N, C, P, P] for `layout`, `images[b]` being layer b; padding slots are zeros.
// `max_anisotropy` is the sampler's (1 where a device samples isotropically). Throws Error
// when an image is missing or has fewer levels than the layout needs.
std::vector<float> reference_sample_patches(const PatchLayout& layout, std::span<const MipLevels> images, Format format,
                                            uint32_t channels, uint32_t max_anisotropy = kMaxAnisotropy);

}  // namespace tvlm
