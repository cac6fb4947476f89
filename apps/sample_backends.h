#pragma once
// The three backends of `tvlm sample`: the same request in, the same [B, N, C, P, P] out.
#include <string>
#include <vector>

#include "engine/core/context.h"
#include "apps/input_image.h"
#include "engine/sampling/patch.h"
#include "engine/sampling/vulkan_patch_sampler.h"

namespace tvlm {

struct SampleRequest {
    std::vector<InputImage> images;  // one per layer, all the layout's size, in the format's precision
    Format format = Format::rgba8_unorm;
    PatchLayout layout;
    PatchOutput output;
};

struct SampleResult {
    std::vector<float> values;  // float16 output is widened
    uint32_t max_anisotropy = 1;
};

// Mips by the CPU box reference, samples by the CPU reference.
SampleResult sample_on_cpu(const SampleRequest& request);
// Upload, box mips and the compute sampler on `context`'s device.
SampleResult sample_on_vulkan(Context& context, const SampleRequest& request);
// Upload and box mips in Vulkan, imported by CUDA, sampled by the texture-unit kernel after
// an in-stream wait. Throws Error where CUDA is not built or no CUDA device matches.
SampleResult sample_on_cuda(Context& context, const SampleRequest& request);

}  // namespace tvlm
