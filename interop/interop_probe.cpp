#include "interop/interop_probe.h"

#include <vector>

#include "cuda/cuda_check.h"
#include "interop/cuda_link.h"
#include "cuda/device_buffer.h"
#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "interop/textures/imported_texture.h"
#include "cuda/sampling/texture_reads.h"
#include "engine/textures/transfer.h"

namespace tvlm {

InteropProbe probe_interop(const DeviceInfo& device) {
    try {
        ContextDesc desc;
        desc.device.uuid = device.uuid;
        Context context(desc);
        CudaLink link(context);
        ImportedTexture texture = ImportedTexture::create(context, TextureDesc::sampled_2d(16, 16, Format::rgba8_unorm),
                                                          CudaSamplerDesc::point());
        std::vector<uint8_t> pixels(16 * 16 * 4, 0);
        for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = (i % 4 == 3) ? 255 : static_cast<uint8_t>(i % 251);
        upload(context, texture.vulkan, host_pixels(pixels, 16, 16));
        const uint64_t ready = generate_mips(context, texture.vulkan, MipFilter::box);

        const CudaStream owned_stream = make_stream();
        const cudaStream_t stream = owned_stream.get();
        DeviceBuffer<float> out(16 * 16 * 4);
        std::vector<float> host(out.size());
        link.cuda_wait(stream, ready);
        size_t wrong = 0;
        for (uint32_t level = 0; level < texture.vulkan.levels(); ++level) {
            const Extent2D e = texture.vulkan.extent(level);
            read_level({texture.object.get(), static_cast<int>(level), 0, false, static_cast<int>(e.width),
                        static_cast<int>(e.height), 4, out.data()},
                       stream);
            TVLM_CUDA_CHECK(cudaMemcpyAsync(host.data(), out.data(), size_t{e.width} * e.height * 16,
                                            cudaMemcpyDeviceToHost, stream));
            TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
            const std::vector<uint8_t> expected = readback(context, texture.vulkan, level);
            for (size_t i = 0; i < expected.size(); ++i)
                wrong += static_cast<int>(host[i] * 255.0f + 0.5f) != expected[i];
        }
        if (wrong) return {false, std::to_string(wrong) + " texel values read by CUDA differ from Vulkan's"};
        return {true, "CUDA device " + std::to_string(link.cuda_device()) +
                          " reads a Vulkan mip chain after an "
                          "in-stream timeline wait, every level equal"};
    } catch (const Error& e) { return {false, e.what()}; }
}

}  // namespace tvlm
