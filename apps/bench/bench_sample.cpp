// tvlm bench sample: patch sampling GPU time, texture unit vs software filtering vs Vulkan
// compute, each next to its floor (bytes moved / device copy bandwidth measured here).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/bench/bench_gpu.h"
#include "apps/bench/bench_timing.h"
#include "engine/core/context.h"
#include "cuda/cuda_check.h"
#include "interop/cuda_link.h"
#include "cuda_pipelines/cuda_patch_sampler.h"
#include "apps/bench/cuda_timing.h"
#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "engine/core/gpu_buffer.h"
#include "interop/textures/imported_texture.h"
#include "engine/sampling/patch_layouts.h"
#include "cuda/sampling/patch_sampling.h"
#include "engine/textures/test_chart.h"
#include "cuda/sampling/texture_reads.h"
#include "engine/textures/transfer.h"
#include "engine/sampling/vulkan_point_sampler.h"
#include "engine/sampling/vulkan_patch_sampler.h"

namespace tvlm {

namespace {

// Random patches with fractional levels: 1M samples read the way patch layouts read.
PatchLayout scattered_patches(uint32_t size, uint32_t count) {
    PatchLayout layout{.kind = "random", .width = size, .height = size, .patch_size = 16};
    uint32_t h = 12345;
    const auto next = [&] {
        h = h * 1664525u + 1013904223u;
        return float(h >> 8) * (1.0f / 16777216.0f);
    };
    const float max_level = float(full_mip_count(size, size) - 5);
    for (uint32_t i = 0; i < count; ++i) {
        const float level = next() * max_level, extent = 16.0f * std::exp2(level) / float(size);
        layout.patches.push_back({next(), next(), extent, extent, level, 1.0f, 0.0f, 0});
    }
    layout.patches_per_image = count;
    layout.levels_needed = full_mip_count(size, size);
    return layout;
}

}  // namespace

std::vector<Row> bench_sample(BenchGpu& gpu) {
    Context& context = gpu.context;
    const cudaStream_t stream = gpu.stream;
    const double d2d = gpu.machine.copy_bandwidth;
    std::vector<Row> rows;

    // One job on three paths: the texture unit, software filtering, Vulkan compute.
    const auto three_ways = [&](const std::string& job, ImportedTexture& texture, const PatchLayout& layout,
                                PatchOutput output) {
        CudaPatchSampler cuda(layout, output);
        VulkanPatchSampler vulkan(context, layout, output);
        const TextureObject object = texture.cuda.make_texture_object(cuda.sampler_desc());
        DeviceBuffer<unsigned char> out(output.bytes(layout));
        const size_t samples = layout.samples();
        // Floor: the output written once and about one texel (4 bytes) read per sample.
        const double floor_us = (double(out.bytes()) + 4.0 * double(samples)) / d2d * 1e6;
        Timing t = time_cuda(stream, [&] { cuda.sample(texture.cuda, object.get(), out.data(), out.bytes(), stream); });
        rows.push_back({job, "CUDA texture unit", t.median_us, t.min_us, floor_us});
        if (texture.vulkan.desc().format == Format::rgba8_unorm) {
            const PyramidCopy pyramid = PyramidCopy::copy(texture.cuda, stream);
            t = time_cuda(
                stream, [&] { cuda.sample_software(pyramid, texture.vulkan.desc(), out.data(), out.bytes(), stream); });
            rows.push_back({job, "CUDA software filtering", t.median_us, t.min_us, floor_us});
        }
        GpuBuffer vk_out(context.physical_device(), context.device(), output.bytes(layout),
                         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        t = time_vulkan(context, [&](VkCommandBuffer cmd) {
            vulkan.record(cmd, texture.vulkan, vk_out.handle(), 0, vk_out.size());
        });
        rows.push_back({job, "Vulkan compute", t.median_us, t.min_us, floor_us});
    };

    // Foveated patches from a 4096^2 frame, then a batch of 32 frames with their own fixations.
    const Rgba8Image chart = make_test_chart(4096, 4096);
    FoveatedParams fovea;
    const PatchLayout one = foveated_layout(4096, 4096, fovea).layout;
    {
        ImportedTexture texture = ImportedTexture::create(context, {4096, 4096, 1, 0, Format::rgba8_unorm, true});
        upload(context, texture.vulkan, host_pixels(chart.texels, 4096, 4096));
        context.queue().wait(generate_mips(context, texture.vulkan, MipFilter::box));
        // Budget 273: a centred fixation on a square frame gives 271 (splits add 3 patches).
        const std::string patches = std::to_string(one.patches_per_image) + " foveated 16x16 patches (budget 273), ";
        three_ways(patches + "4096^2 RGBA8, C=3 f32", texture, one, {.channels = 3});
        three_ways(patches + "4096^2 RGBA8, C=3 f16", texture, one, {.channels = 3, .half = true});
    }
    std::fprintf(stderr, "sample [1/3] one image measured\n");
    {
        constexpr uint32_t kBatch = 32;
        ImportedTexture texture = ImportedTexture::create(context, {4096, 4096, kBatch, 0, Format::rgba8_unorm, true});
        std::vector<PatchLayout> per_image;
        for (uint32_t b = 0; b < kBatch; ++b) {
            upload(context, texture.vulkan, host_pixels(chart.texels, 4096, 4096), {.layer = b});
            FoveatedParams p;
            p.fixations = {{(b % 8 + 0.5) / 8.0, (b / 8 + 0.5) / 4.0}};
            per_image.push_back(foveated_layout(4096, 4096, p).layout);
        }
        context.queue().wait(generate_mips(context, texture.vulkan, MipFilter::box));
        const PatchLayout batch = batch_layouts(per_image);
        three_ways("batch of 32 x " + std::to_string(batch.patches.size() / kBatch) +
                       " foveated patches (budget 273, mean), 4096^2 RGBA8 layers, C=3 f32",
                   texture, batch, {.channels = 3});
    }
    std::fprintf(stderr, "sample [2/3] batch measured\n");

    // 1M trilinear samples at per-sample LOD (point kernel), and 1M samples as 4096 random
    // patches with fractional levels on all three paths.
    constexpr int kSamples = 1 << 20;
    DeviceBuffer<float4> points(kSamples);
    for (uint32_t size : {1024u, 4096u}) {
        ImportedTexture texture = ImportedTexture::create(context, {size, size, 1, 0, Format::rgba8_unorm, true});
        const Rgba8Image image = make_test_chart(size, size);
        upload(context, texture.vulkan, host_pixels(image.texels, size, size));
        context.queue().wait(generate_mips(context, texture.vulkan, MipFilter::box));
        const float max_lod = float(full_mip_count(size, size) - 1);
        const std::string job = "1M trilinear samples, per-sample LOD, " + std::to_string(size) + "^2 RGBA8, float4";
        const double floor_us = 16.0 * kSamples / d2d * 1e6;
        const PyramidCopy pyramid = PyramidCopy::copy(texture.cuda, stream);
        VulkanPointSampler vulkan(context);
        GpuBuffer vk_points(context.physical_device(), context.device(), points.bytes(),
                            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        for (uint32_t tiles : {0u, 1u}) {
            const std::string where = tiles ? "16x16 tiles" : "scattered";
            const gpu::PointSampleParams params{kSamples, max_lod, 7u, tiles, 1.0f / float(size)};
            for (bool grouped : {false, true}) {
                const PointSampling sampling{texture.object.get(), params, points.data(), grouped};
                const Timing t = time_cuda(stream, [&] { sample_points(sampling, stream); });
                rows.push_back({job, "CUDA texture unit, " + where + (grouped ? ", grouped by level" : ""), t.median_us,
                                t.min_us, floor_us});
            }
            Timing t = time_cuda(stream,
                                 [&] { sample_points_software(pyramid.pyramid(), params, points.data(), stream); });
            rows.push_back({job, "CUDA software filtering, " + where, t.median_us, t.min_us, floor_us});
            vulkan.check(texture.vulkan, params, vk_points.size());
            t = time_vulkan(context, [&](VkCommandBuffer cmd) {
                vulkan.record(cmd, texture.vulkan, params, vk_points.handle(), 0, vk_points.size());
            });
            rows.push_back({job, "Vulkan compute, " + where, t.median_us, t.min_us, floor_us});
        }
        three_ways("1M samples as 4096 random 16x16 patches, fractional LOD, " + std::to_string(size) + "^2, C=4 f32",
                   texture, scattered_patches(size, 4096), {.channels = 4});
    }
    std::fprintf(stderr, "sample [3/3] 1M samples measured\n");
    TVLM_CUDA_CHECK(cudaGetLastError());

    tag_rows(rows, "sample");
    return rows;
}

}  // namespace tvlm
