// tvlm bench where no NVIDIA GPU (or no CUDA build) is at hand: the rows that need none.
// Mip chains by Vulkan compute, vkCmdBlitImage and glGenerateMipmap, foveated patches by
// Vulkan compute, and the overlay's KNN graph (CPU) and Vulkan renderer, each next to its floor at the Vulkan device's own buffer copy rate,
// measured at the start of the run (CUDA's rate, which the full suites use, needs CUDA).
#include "apps/bench/bench_without_cuda.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <random>
#include <string>
#include <tuple>

#include "engine/core/barriers.h"
#include "apps/bench/bench_timing.h"
#include "engine/core/context.h"
#include "interop/gl/egl_context.h"
#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "engine/overlay/overlay_renderer.h"
#include "apps/bench/overlay_scenes.h"
#include "interop/gl/gl_texture.h"
#include "engine/core/gpu_buffer.h"
#include "engine/sampling/patch_layouts.h"
#include "engine/textures/test_chart.h"
#include "engine/textures/transfer.h"
#include "engine/sampling/vulkan_patch_sampler.h"

namespace tvlm {

namespace {

// Bytes read + written per second by vkCmdCopyBuffer between two device buffers.
double vulkan_copy_bandwidth(Context& context, VkDeviceSize bytes, int launches) {
    const VkPhysicalDevice physical = context.physical_device();
    const GpuBuffer a(physical, context.device(), bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
    const GpuBuffer b(physical, context.device(), bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
    const Timing t = time_vulkan(
        context,
        [&](VkCommandBuffer cmd) {
            // Each copy after the one before it (back-to-back writes of one buffer are a hazard).
            record_memory_barrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                  VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
            const VkBufferCopy region{0, 0, bytes};
            vkCmdCopyBuffer(cmd, a.handle(), b.handle(), 1, &region);
        },
        launches);
    return 2.0 * double(bytes) / (t.median_us * 1e-6);
}

// Level 0 read once and every other level written once (bench_mips.cpp's floor).
double chain_bytes(uint32_t width, uint32_t height, Format format) {
    double bytes = 0;
    for (uint32_t l = 0; l < full_mip_count(width, height); ++l) {
        const Extent2D e = level_extent(width, height, l);
        bytes += double(e.width) * e.height * format_info(format).texel_bytes();
    }
    return bytes;
}

}  // namespace

std::vector<Row> bench_without_cuda(const Args& args, const std::vector<std::string>& suites, BenchMachine& machine) {
    ContextDesc desc;
    desc.device = DeviceSelector::parse(args.option_or("device", ""));
    Context context(desc);
    // A CPU device (lavapipe) is a thousand times slower than a GPU: smaller jobs, fewer runs.
    const bool cpu = context.device_info().type == "cpu";
    const int launches = cpu ? 2 : kLaunches;
    machine = {context.device_info().name, context.device_info().driver,
               vulkan_copy_bandwidth(context, VkDeviceSize{cpu ? 64u : 1024u} << 20, cpu ? 2 : 10), 0};
    std::fprintf(stderr, "bandwidth: Vulkan buffer copy %.1f GB/s on %s\n", machine.copy_bandwidth * 1e-9,
                 machine.gpu.c_str());
    const std::string only = args.option_or("only", "");
    const auto wanted = [&](const std::string& suite) {
        return std::find(suites.begin(), suites.end(), suite) != suites.end();
    };
    std::vector<Row> rows;

    if (wanted("mips")) {
        std::optional<EglContext> gl;
        try {
            gl.emplace(EglContextDesc{});
        } catch (const std::exception& e) { std::printf("mips: OpenGL rows left out: %s\n", e.what()); }
        struct Job {
            uint32_t size;
            Format format;
        };
        const std::vector<Job> jobs = cpu ? std::vector<Job>{{1024, Format::rgba8_unorm}, {1024, Format::rgba8_srgb}}
                                          : std::vector<Job>{{1024, Format::rgba8_unorm},
                                                             {4096, Format::rgba8_unorm},
                                                             {4096, Format::rgba16f},
                                                             {4096, Format::rgba8_srgb}};
        std::vector<Row> mips;
        for (const Job& j : jobs) {
            const std::string name = "full chain, " + std::to_string(j.size) + "^2 " +
                                     std::string(format_info(j.format).name);
            if (name.find(only) == std::string::npos) continue;
            const double floor_us = chain_bytes(j.size, j.size, j.format) / machine.copy_bandwidth * 1e6;
            Texture texture = Texture::create(context, TextureDesc::sampled_2d(j.size, j.size, j.format));
            const Rgba8Image chart = make_test_chart(j.size, j.size);
            upload(context, texture, host_pixels(chart.texels, j.size, j.size));
            context.queue().wait(generate_mips(context, texture, MipFilter::box));
            Timing t = time_vulkan(
                context, [&](VkCommandBuffer cmd) { record_mips_box(context, cmd, texture); }, launches);
            mips.push_back({name, "Vulkan box, single pass", t.median_us, t.min_us, floor_us});
            t = time_vulkan(
                context, [&](VkCommandBuffer cmd) { record_mips_blit(context, cmd, texture); }, launches);
            mips.push_back({name, "Vulkan blit chain", t.median_us, t.min_us, floor_us});
            if (gl) {
                GlTexture gl_texture = GlTexture::create(*gl, {j.size, j.size, 1, 0, j.format, false});
                gl_texture.upload(to_image(host_pixels(chart.texels, j.size, j.size), 4), 0);
                t = time_gl(
                    *gl, [&] { gl_texture.generate_mips(); }, launches);
                mips.push_back({name, "OpenGL glGenerateMipmap", t.median_us, t.min_us, floor_us});
            }
            std::fprintf(stderr, "mips: %s measured\n", name.c_str());
        }
        tag_rows(mips, "mips");
        rows.insert(rows.end(), mips.begin(), mips.end());
    }

    if (wanted("sample")) {
        const uint32_t size = cpu ? 1024 : 4096;
        Texture texture = Texture::create(context, TextureDesc::sampled_2d(size, size, Format::rgba8_unorm));
        const Rgba8Image chart = make_test_chart(size, size);
        upload(context, texture, host_pixels(chart.texels, size, size));
        context.queue().wait(generate_mips(context, texture, MipFilter::box));
        const PatchLayout layout = foveated_layout(size, size, FoveatedParams{}).layout;
        const PatchOutput output{.channels = 3};
        VulkanPatchSampler sampler(context, layout, output);
        const GpuBuffer out(context.physical_device(), context.device(), output.bytes(layout),
                            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        // Floor: the output written once and about one texel (4 bytes) read per sample.
        const double floor_us = (double(out.size()) + 4.0 * double(layout.samples())) / machine.copy_bandwidth * 1e6;
        const Timing t = time_vulkan(
            context, [&](VkCommandBuffer cmd) { sampler.record(cmd, texture, out.handle(), 0, out.size()); }, launches);
        const std::string job = std::to_string(layout.patches_per_image) + " foveated 16x16 patches (budget 273), " +
                                std::to_string(size) + "^2 RGBA8, C=3 f32";
        std::vector<Row> sample{{job, "Vulkan compute", t.median_us, t.min_us, floor_us}};
        tag_rows(sample, "sample");
        rows.insert(rows.end(), sample.begin(), sample.end());
        std::fprintf(stderr, "sample: %s measured\n", job.c_str());
    }
    if (wanted("overlay")) {
        // The CUDA suite's scenes on a 3840x2160 frame: the KNN graph's host time, and the
        // Vulkan renderer's wall time per draw (submit + wait). Floor: the frame read and written.
        const double floor_us = 2.0 * kWidth * kHeight * 4 / machine.copy_bandwidth * 1e6;
        OverlayRenderer vulkan(context);
        Texture texture = Texture::create(context, TextureDesc::sampled_2d(kWidth, kHeight, Format::rgba8_unorm, 1));
        std::vector<Row> overlay;
        for (const auto& [name, boxes, points] : {std::tuple{"100 boxes with labels", 100, 0},
                                                  std::tuple{"100 points, k = 5, links as Bezier curves", 0, 100}}) {
            const std::string job = std::string("overlay 3840x2160 rgba8: ") + name;
            if (job.find(only) == std::string::npos) continue;
            std::mt19937 random(7);
            OverlayScene scene;
            add_boxes(scene, size_t(boxes), boxes > 0, random);
            const std::vector<KnnPoint> knn_points = add_points(scene, size_t(points), random);
            if (points) {
                double min_us = 0;
                const double median_us = add_links(scene, knn_points, 5, &min_us);
                overlay.push_back({job, "KNN graph, CPU (exact, " + std::to_string(scene.curves.size()) + " links)",
                                   median_us, min_us, 0});
            }
            const std::vector<gpu::OverlayShape> shapes = overlay_shapes(scene, kWidth, kHeight);
            const Timing t = time_frames([&](uint64_t) { context.queue().wait(vulkan.draw(texture, shapes)); }, [] {},
                                         cpu ? 1 : 5, cpu ? 3 : kRuns, cpu ? 1 : 3);
            overlay.push_back(
                {job, "Vulkan compute, wall time per draw (submit + wait)", t.median_us, t.min_us, floor_us});
            std::fprintf(stderr, "overlay: %s measured\n", job.c_str());
        }
        tag_rows(overlay, "overlay");
        rows.insert(rows.end(), overlay.begin(), overlay.end());
    }
    context.queue().wait_all();
    if (context.validation_log().count())
        throw Error(std::to_string(context.validation_log().count()) + " Vulkan validation message(s), see above");
    return rows;
}

}  // namespace tvlm
