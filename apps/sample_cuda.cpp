// The CUDA backend of `tvlm sample` (built with CUDA only; sample_backends.cpp says so otherwise).
#include <cstring>

#include "cuda/cuda_check.h"
#include "interop/cuda_link.h"
#include "cuda_pipelines/cuda_patch_sampler.h"
#include "engine/mips/generate_mips.h"
#include "engine/textures/half.h"
#include "interop/textures/imported_texture.h"
#include "apps/sample_backends.h"
#include "engine/textures/transfer.h"

namespace tvlm {

SampleResult sample_on_cuda(Context& context, const SampleRequest& request) {
    CudaLink link(context);  // selects the CUDA device that is this Vulkan device
    const InputImage& first = request.images.front();
    CudaPatchSampler sampler(request.layout, request.output);
    ImportedTexture texture = ImportedTexture::create(
        context, {first.width, first.height, uint32_t(request.images.size()), 0, request.format, true},
        sampler.sampler_desc());
    const size_t bytes = request.output.bytes(request.layout);
    sampler.check(texture.vulkan.desc(), bytes);
    for (uint32_t l = 0; l < request.images.size(); ++l)
        upload(context, texture.vulkan, request.images[l].pixels(), {.layer = l});
    const uint64_t ready = generate_mips(context, texture.vulkan, MipFilter::box);

    const CudaStream stream = make_stream();
    DeviceBuffer<unsigned char> out(bytes);
    std::vector<unsigned char> host(bytes);
    sample_after(link, ready, sampler, texture.cuda, texture.object.get(), out.data(), bytes, stream.get());
    TVLM_CUDA_CHECK(cudaMemcpyAsync(host.data(), out.data(), bytes, cudaMemcpyDeviceToHost, stream.get()));
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    SampleResult result{std::vector<float>(request.layout.output_values(request.output.channels)),
                        sampler.sampler_desc().max_anisotropy};
    for (size_t i = 0; i < result.values.size(); ++i) {
        if (request.output.half) result.values[i] = half_to_float(reinterpret_cast<const uint16_t*>(host.data())[i]);
        else std::memcpy(&result.values[i], host.data() + i * 4, 4);
    }
    return result;
}

}  // namespace tvlm
