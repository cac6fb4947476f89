// tvlm bench mips: mip chain GPU time, the single-pass box downsampler (Vulkan compute and
// CUDA surfaces) against vkCmdBlitImage, each next to its floor: the base read once and
// every other level written once, at the device copy bandwidth measured in the same run.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "apps/bench/bench_gpu.h"
#include "apps/bench/bench_timing.h"
#include "engine/core/context.h"
#include "cuda_pipelines/cuda_array_texture.h"
#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/cuda_check.h"
#include "interop/cuda_link.h"
#include "interop/gl/egl_context.h"
#include "engine/mips/generate_mips.h"
#include "interop/gl/gl_texture.h"
#include "interop/textures/imported_texture.h"
#include "engine/textures/test_chart.h"
#include "engine/textures/transfer.h"

namespace tvlm {

namespace {

struct Job {
    uint32_t width, height, layers;
    Format format;
    uint32_t dirty = 0;  // > 0: a dirty x dirty rectangle of level 0 regenerates
};

std::string job_name(const Job& j) {
    const std::string size = j.width == j.height ? std::to_string(j.width) + "^2"
                                                 : std::to_string(j.width) + "x" + std::to_string(j.height);
    std::string name = size + " " + std::string(format_info(j.format).name);
    if (j.layers > 1) name += " x " + std::to_string(j.layers) + " layers";
    return j.dirty ? std::to_string(j.dirty) + "^2 dirty rectangle in a " + name : "full chain, " + name;
}

// Bytes a chain must move: level 0 (or the dirty rectangle) read once, every texel of the
// other levels that depends on it written once.
double floor_bytes(const Job& j) {
    const double texel = format_info(j.format).texel_bytes();
    double bytes = 0;
    if (j.dirty) {
        const uint32_t levels = full_mip_count(j.width, j.height);
        double w = j.dirty;
        for (uint32_t l = 0; l < levels; ++l, w = std::max(1.0, std::ceil(w / 2))) bytes += w * w * texel;
    } else {
        for (uint32_t l = 0; l < full_mip_count(j.width, j.height); ++l) {
            const Extent2D e = level_extent(j.width, j.height, l);
            bytes += double(e.width) * e.height * texel;
        }
    }
    return bytes * j.layers;
}

}  // namespace

std::vector<Row> bench_mips(BenchGpu& gpu) {
    Context& context = gpu.context;
    const cudaStream_t stream = gpu.stream;

    // glGenerateMipmap on the same GPU (EGL device of the CUDA device), where EGL works.
    std::optional<EglContext> gl;
    std::string gl_unavailable;
    try {
        gl.emplace(EglContextDesc{.cuda_device = gpu.link.cuda_device()});
    } catch (const std::exception& e) { gl_unavailable = e.what(); }
    const double d2d = gpu.machine.copy_bandwidth;
    // Video's frame sizes too: their chains turn odd after a few levels (1080 = 135 x 8).
    const std::vector<Job> jobs = {{1024, 1024, 1, Format::rgba8_unorm},  {2048, 2048, 1, Format::rgba8_unorm},
                                   {4096, 4096, 1, Format::rgba8_unorm},  {1920, 1080, 1, Format::rgba8_unorm},
                                   {3840, 2160, 1, Format::rgba8_unorm},  {1024, 1024, 1, Format::rgba16f},
                                   {2048, 2048, 1, Format::rgba16f},      {4096, 4096, 1, Format::rgba16f},
                                   {1024, 1024, 32, Format::rgba8_unorm}, {1024, 1024, 32, Format::rgba16f},
                                   {1024, 1024, 1, Format::rgba8_srgb},   {2048, 2048, 1, Format::rgba8_srgb},
                                   {4096, 4096, 1, Format::rgba8_srgb},   {4096, 4096, 1, Format::rgba8_unorm, 256}};
    std::vector<Row> rows;
    for (size_t i = 0; i < jobs.size(); ++i) {
        const Job& j = jobs[i];
        const std::string name = job_name(j);
        if (name.find(gpu.only) == std::string::npos) continue;
        const double floor_us = floor_bytes(j) / d2d * 1e6;
        ImportedTexture texture = ImportedTexture::create(context, {j.width, j.height, j.layers, 0, j.format, true});
        const Rgba8Image chart = make_test_chart(j.width, j.height);
        for (uint32_t layer = 0; layer < j.layers; ++layer)
            upload(context, texture.vulkan, host_pixels(chart.texels, j.width, j.height), {.layer = layer});
        context.queue().wait(generate_mips(context, texture.vulkan, MipFilter::box));
        const CudaBoxMips cuda(texture.cuda), cuda_texels(texture.cuda, CudaBoxKernels::per_texel);
        if (j.dirty) {
            const DirtyRegion region{.x = 1000, .y = 1000, .width = j.dirty, .height = j.dirty};
            Timing t = time_vulkan(
                context, [&](VkCommandBuffer cmd) { record_mips_update(context, cmd, texture.vulkan, region); });
            rows.push_back({name, "Vulkan box, single pass", t.median_us, t.min_us, floor_us});
            t = time_cuda(stream, [&] { cuda.update(region, stream); });
            rows.push_back({name, "CUDA box, packed kernel", t.median_us, t.min_us, floor_us});
        } else {
            Timing t = time_vulkan(context,
                                   [&](VkCommandBuffer cmd) { record_mips_box(context, cmd, texture.vulkan); });
            rows.push_back({name, "Vulkan box, single pass", t.median_us, t.min_us, floor_us});
            t = time_cuda(stream, [&] { cuda.generate(stream); });
            rows.push_back({name, "CUDA box, packed kernel", t.median_us, t.min_us, floor_us});
            t = time_cuda(stream, [&] { cuda_texels.generate(stream); });
            rows.push_back({name, "CUDA box, per-texel kernel", t.median_us, t.min_us, floor_us});
            {  // The pure-CUDA path: the same kernel on a cudaMallocMipmappedArray.
                const CudaArrayTexture own = CudaArrayTexture::create(
                    {j.width, j.height, j.layers, 0, j.format, false});
                // The same content (sRGB encoding cost depends on it): level 0 copied over.
                cudaMemcpy3DParms copy{};
                copy.srcArray = texture.cuda.mipmaps().level(0);
                copy.dstArray = own.mipmaps().level(0);
                copy.extent = cudaExtent{j.width, j.height, j.layers};
                copy.kind = cudaMemcpyDeviceToDevice;
                TVLM_CUDA_CHECK(cudaMemcpy3DAsync(&copy, stream));
                const CudaBoxMips own_mips(own);
                t = time_cuda(stream, [&] { own_mips.generate(stream); });
                rows.push_back({name, "CUDA-only array, CUDA box packed", t.median_us, t.min_us, floor_us});
            }
            t = time_vulkan(
                context, [&](VkCommandBuffer cmd) { record_mips_blit(context, cmd, texture.vulkan); }, 10);
            rows.push_back({name, "Vulkan blit chain", t.median_us, t.min_us, floor_us});
            if (gl) {
                GlTexture gl_texture = GlTexture::create(*gl, {j.width, j.height, j.layers, 0, j.format, false});
                const ImageF frame = to_image(host_pixels(chart.texels, j.width, j.height), 4);
                for (uint32_t layer = 0; layer < j.layers; ++layer) gl_texture.upload(frame, layer);
                t = time_gl(
                    *gl, [&] { gl_texture.generate_mips(); }, 10);
                rows.push_back({name, "OpenGL glGenerateMipmap", t.median_us, t.min_us, floor_us});
            }
        }
        context.queue().wait_all();
        std::fprintf(stderr, "mips [%zu/%zu] %s\n", i + 1, jobs.size(), name.c_str());
    }
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));

    if (!gl) std::printf("mips: OpenGL rows left out: %s\n", gl_unavailable.c_str());
    tag_rows(rows, "mips");
    return rows;
}

}  // namespace tvlm
