#include "apps/sample_backends.h"

#include <cstring>

#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "engine/textures/half.h"
#include "engine/mips/reference_mips.h"
#include "engine/sampling/reference_sampling.h"
#include "engine/textures/texture.h"
#include "engine/textures/transfer.h"

namespace tvlm {

SampleResult sample_on_cpu(const SampleRequest& request) {
    const InputImage& first = request.images.front();
    check_reference_chain_memory(first.width, first.height, full_mip_count(first.width, first.height),
                                 uint32_t(request.images.size()),
                                 "the CPU reference of " + std::to_string(request.images.size()) + " image(s) of " +
                                     std::to_string(first.width) + "x" + std::to_string(first.height));
    std::vector<MipLevels> images;
    for (const InputImage& image : request.images) {
        images.push_back(reference_mip_chain(to_image(image.pixels(), format_info(request.format).channels),
                                             request.format, MipFilter::box,
                                             full_mip_count(image.width, image.height)));
    }
    SampleResult result{reference_sample_patches(request.layout, images, request.format, request.output.channels),
                        request.layout.mode == SamplingMode::gradients ? kMaxAnisotropy : 1};
    if (request.output.half)
        for (float& v : result.values) v = half_to_float(float_to_half(v));
    return result;
}

SampleResult sample_on_vulkan(Context& context, const SampleRequest& request) {
    const InputImage& first = request.images.front();
    Texture texture = Texture::create(
        context, {first.width, first.height, uint32_t(request.images.size()), 0, request.format, false});
    VulkanPatchSampler sampler(context, request.layout, request.output);
    const size_t bytes = request.output.bytes(request.layout);
    sampler.check(texture, bytes);
    for (uint32_t l = 0; l < request.images.size(); ++l)
        upload(context, texture, request.images[l].pixels(), {.layer = l});
    generate_mips(context, texture, MipFilter::box);
    HostBuffer out(context.physical_device(), context.device(), bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    context.queue().wait(sampler.sample(texture, out.handle(), 0, bytes));
    SampleResult result{std::vector<float>(request.layout.output_values(request.output.channels)),
                        sampler.max_anisotropy()};
    if (!request.output.half) {
        std::memcpy(result.values.data(), out.data(), bytes);
    } else {
        const auto* h = reinterpret_cast<const uint16_t*>(out.data());
        for (size_t i = 0; i < result.values.size(); ++i) result.values[i] = half_to_float(h[i]);
    }
    return result;
}

#ifndef TVLM_HAVE_CUDA
SampleResult sample_on_cuda(Context&, const SampleRequest&) {
    throw Error("tvlm was built without CUDA (no nvcc at configure time): use --backend vulkan or cpu");
}
#endif

}  // namespace tvlm
