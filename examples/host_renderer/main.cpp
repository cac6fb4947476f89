// An application that renders with Vulkan and feeds a vision model with texturevlm: it
// owns its instance, device, queue, image and command buffers (renderer.h); each frame it
// draws a scene with a graphics pipeline (dynamic rendering) into its image, then hands the
// image to texturevlm for its box mip chain and 273 foveated patches:
//  - Vulkan compute, everywhere: recorded into the frame's own command buffer;
//  - CUDA, where an NVIDIA GPU is present (cuda_frames.h): zero-copy on the renderer's own
//    image, and copied into an exportable texture inside the frame's submission.
// Every frame of every path is checked against texturevlm's CPU reference. Writes
// frame_N.png and patches.png; --bench N times N frames of each path.
//
//   host_renderer [--frames N] [--size S] [--bench N] [--out DIR]
//   (TVLM_VALIDATION=1: validation layers on; any message makes the run fail)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "engine/core/host_buffer.h"
#include "engine/image_files/image_files.h"
#include "engine/sampling/patch_layouts.h"
#include "engine/mips/reference_mips.h"
#include "engine/sampling/reference_sampling.h"
#include "examples/host_renderer/renderer.h"
#include "engine/textures/texture.h"
#include "engine/sampling/tolerance.h"
#include "engine/textures/transfer.h"
#include "engine/sampling/vulkan_patch_sampler.h"
#ifdef TVLM_HAVE_CUDA
#include "cuda/cuda_check.h"
#include "examples/host_renderer/cuda_frames.h"
#endif

using namespace tvlm;
using example::Renderer;

namespace {

Rgba8Image to_bytes(const ImageF& image) {
    Rgba8Image out{image.width, image.height, std::vector<uint8_t>(size_t{image.width} * image.height * 4, 255)};
    for (size_t t = 0; t < size_t{image.width} * image.height; ++t)
        for (uint32_t c = 0; c < std::min(image.channels, 4u); ++c)
            out.texels[t * 4 + c] = uint8_t(
                std::lround(std::clamp(image.texels[t * image.channels + c], 0.0f, 1.0f) * 255));
    return out;
}

// The patches [N, 3, P, P] tiled row by row into one picture, padding slots black.
Rgba8Image patch_sheet(const std::vector<float>& values, size_t patches, uint32_t p) {
    const uint32_t columns = 24, rows = uint32_t((patches + columns - 1) / columns);
    Rgba8Image sheet{columns * (p + 1), rows * (p + 1), {}};
    sheet.texels.assign(size_t{sheet.width} * sheet.height * 4, 0);
    for (size_t i = 3; i < sheet.texels.size(); i += 4) sheet.texels[i] = 255;  // opaque black gaps
    for (size_t n = 0; n < patches; ++n)
        for (uint32_t k = 0; k < p; ++k)
            for (uint32_t j = 0; j < p; ++j) {
                const size_t x = (n % columns) * (p + 1) + j, y = (n / columns) * (p + 1) + k;
                for (uint32_t c = 0; c < 3; ++c) {
                    const float v = values[((n * 3 + c) * p + k) * p + j];
                    sheet.texels[(y * sheet.width + x) * 4 + c] = uint8_t(std::lround(std::clamp(v, 0.0f, 1.0f) * 255));
                }
            }
    return sheet;
}

struct Options {
    int frames = 3;
    uint32_t size = 512;
    int bench = 0;  // frames timed per path; 0: no benchmark
    std::string out = "host_renderer_out";
};

// Checks a frame's mips and patches against the CPU reference and writes the frame.
bool check_frame(Context& context, Texture& texture, const std::vector<float>& patches, const PatchLayout& layout,
                 const std::string& path, const Options& options, int f) {
    MipLevels levels;
    for (uint32_t l = 0; l < texture.levels(); ++l) levels.push_back(readback_image(context, texture, l));
    const std::vector<ImageF> want = reference_mip_chain(levels[0], Format::rgba8_unorm, MipFilter::box,
                                                         texture.levels());
    size_t mip_errors = 0;
    for (uint32_t l = 1; l < texture.levels(); ++l)
        for (size_t i = 0; i < want[l].texels.size(); ++i)
            mip_errors += levels[l].texels[i] != want[l].texels[i];  // the RGBA8 box chain is exact
    const std::vector<MipLevels> images{levels};
    const std::vector<float> expected = reference_sample_patches(layout, images, Format::rgba8_unorm, 3);
    size_t patch_errors = 0;
    for (size_t i = 0; i < patches.size(); ++i)
        patch_errors += !(std::fabs(patches[i] - expected[i]) <= sample_tolerance(false, false, expected[i]));
    const std::string name = options.out + "/frame_" + std::to_string(f) + ".png";
    write_png(name, to_bytes(levels[0]));
    std::printf(
        "%s, frame %d: %s, %u levels (%zu texels off the reference), %zu patches of %ux%u (%zu values off "
        "the reference)\n",
        path.c_str(), f, name.c_str(), texture.levels(), mip_errors, layout.patches.size(), layout.patch_size,
        layout.patch_size, patch_errors);
    if (f == options.frames - 1)
        write_png(options.out + "/patches.png", patch_sheet(patches, layout.patches.size(), layout.patch_size));
    return mip_errors == 0 && patch_errors == 0;
}

// Wall time per frame of `frames` frames in a steady stream (two submissions in flight),
// after a warm-up; `frame(f)` records and submits frame f, `drain()` waits for all of it.
double microseconds_per_frame(int frames, const std::function<void(uint64_t)>& frame,
                              const std::function<void()>& drain) {
    for (uint64_t f = 0; f < 20; ++f) frame(f);
    drain();
    const auto start = std::chrono::steady_clock::now();
    for (uint64_t f = 20; f < 20 + uint64_t(frames); ++f) frame(f);
    drain();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / frames;
}

struct Paths {
    Renderer& renderer;
    Context& context;
    Texture& frame;
    PatchLayout layout;
    VulkanPatchSampler sampler;
    HostBuffer patches;

    // Frame f on Vulkan compute: the scene, then texturevlm's work on the same image, in
    // one command buffer of the renderer's.
    void vulkan_frame(uint64_t f) {
        const uint32_t slot = uint32_t(f % 2);
        const VkCommandBuffer cmd = renderer.begin(slot);
        renderer.draw(cmd, frame, 0.4f * float(f));
        record_mips(context, cmd, frame, MipFilter::box);
        sampler.record(cmd, frame, patches.handle(), 0, patches.size());
        renderer.submit(slot);
    }
    void render_only_frame(uint64_t f) {
        const uint32_t slot = uint32_t(f % 2);
        renderer.draw(renderer.begin(slot), frame, 0.4f * float(f));
        renderer.submit(slot);
    }
#ifdef TVLM_HAVE_CUDA
    // Frame f through CUDA: the scene and the hand-over in the renderer's submission, the
    // mips and patches in CUDA's stream, each side waiting for the other on the GPU.
    void cuda_frame(example::CudaFrames& cuda, uint64_t f) {
        const uint32_t slot = uint32_t(f % 2);
        const VkCommandBuffer cmd = renderer.begin(slot);
        renderer.draw(cmd, frame, 0.4f * float(f));
        cuda.record(cmd);
        renderer.submit(slot, cuda.wait_before(f), cuda.signal_after(f));
        cuda.enqueue(f);
    }
#endif
};

#ifdef TVLM_HAVE_CUDA
bool cuda_present() {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// The bytes the mips and patches must move at least (level 0 read, levels 1.. written,
// patches written), over the device's copy bandwidth measured here: the floor of a frame.
double floor_microseconds(const Texture& frame, const PatchLayout& layout) {
    const size_t bytes = size_t(1) << 28;
    DeviceBuffer<uint8_t> a(bytes), b(bytes);
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    TVLM_CUDA_CHECK(cudaEventCreate(&e0));
    const CudaEvent start(e0);
    TVLM_CUDA_CHECK(cudaEventCreate(&e1));
    const CudaEvent stop(e1);
    TVLM_CUDA_CHECK(cudaMemcpy(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice));
    TVLM_CUDA_CHECK(cudaEventRecord(e0));
    for (int i = 0; i < 10; ++i) TVLM_CUDA_CHECK(cudaMemcpy(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice));
    TVLM_CUDA_CHECK(cudaEventRecord(e1));
    TVLM_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    TVLM_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    const double bytes_per_us = 2.0 * 10 * double(bytes) / (double(ms) * 1e3);  // read + write
    const double level0 = double(frame.desc().width) * frame.desc().height * 4;
    const double moved = level0 + level0 / 3 + double(layout.output_values(3)) * 4;
    return moved / bytes_per_us;
}
#endif

int run(const Options& options) {
    std::filesystem::create_directories(options.out);
    Renderer renderer(options.size);
    Context context(renderer.objects());
    Texture frame = Texture::wrap(context, renderer.image());
    FoveatedParams fovea;
    fovea.fixations = {{0.4, 0.6}};
    fovea.fill_budget = true;  // 273 tokens, as a vision encoder built for 273 wants
    const PatchLayout layout = foveated_layout(options.size, options.size, fovea).layout;
    const PatchOutput output{.channels = 3};
    Paths paths{renderer,
                context,
                frame,
                layout,
                VulkanPatchSampler(context, layout, output),
                HostBuffer(context.physical_device(), context.device(), output.bytes(layout),
                           VK_BUFFER_USAGE_STORAGE_BUFFER_BIT)};
    std::vector<float> values(layout.output_values(3));
    bool all_match = true;
    for (int f = 0; f < options.frames; ++f) {
        std::memset(paths.patches.data(), 0xff, paths.patches.size());  // NaN poison
        paths.vulkan_frame(uint64_t(f));
        renderer.wait_idle();
        std::memcpy(values.data(), paths.patches.data(), values.size() * sizeof(float));
        all_match = check_frame(context, frame, values, layout, "Vulkan compute", options, f) && all_match;
    }
    std::vector<std::pair<std::string, double>> timings;
    if (options.bench > 0) {
        timings.emplace_back(
            "render only (no texturevlm)",
            microseconds_per_frame(
                options.bench, [&](uint64_t f) { paths.render_only_frame(f); }, [&] { renderer.wait_idle(); }));
        timings.emplace_back(
            "Vulkan compute, in the frame's command buffer",
            microseconds_per_frame(
                options.bench, [&](uint64_t f) { paths.vulkan_frame(f); }, [&] { renderer.wait_idle(); }));
    }
#ifdef TVLM_HAVE_CUDA
    double floor_us = 0;
    if (!cuda_present()) {
        std::printf("CUDA paths skipped: no CUDA device\n");
    } else {
        for (example::Handover handover : {example::Handover::zero_copy, example::Handover::copy}) {
            const std::string name = example::handover_name(handover);
            if (handover == example::Handover::zero_copy && !renderer.exportable()) {
                std::printf("%s skipped: the device cannot export memory and semaphores\n", name.c_str());
                continue;
            }
            renderer.wait_idle();
            example::CudaFrames cuda(context, renderer, frame, layout, handover);
            uint64_t f = 0;  // the timeline counts this path's frames from 0
            for (; f < uint64_t(options.frames); ++f) {
                paths.cuda_frame(cuda, f);
                cuda.synchronize();
                renderer.wait_idle();
                all_match = check_frame(context, cuda.texture(), cuda.patches(), layout, name, options, int(f)) &&
                            all_match;
            }
            if (options.bench > 0) {
                const uint64_t first = f;
                timings.emplace_back(name, microseconds_per_frame(
                                               options.bench, [&](uint64_t g) { paths.cuda_frame(cuda, first + g); },
                                               [&] {
                                                   cuda.synchronize();
                                                   renderer.wait_idle();
                                               }));
                if (floor_us == 0) floor_us = floor_microseconds(frame, layout);
            }
            cuda.synchronize();
            renderer.wait_idle();
        }
    }
#endif
    if (!timings.empty()) {
        std::printf("\nper frame, %ux%u RGBA8 rendered -> box mips -> %zu patches, %d frames in a stream on %s:\n",
                    options.size, options.size, layout.patches.size(), options.bench,
                    context.device_info().name.c_str());
        for (const auto& [name, us] : timings) std::printf("  %-48s %9.1f us\n", name.c_str(), us);
#ifdef TVLM_HAVE_CUDA
        if (floor_us > 0)
            std::printf(
                "  %-48s %9.1f us  (bytes of level 0, levels 1.. and patches over the measured copy "
                "bandwidth)\n",
                "floor of mips + patches", floor_us);
#endif
    }
    const auto messages = renderer.log().messages();
    for (const std::string& m : messages) std::fprintf(stderr, "validation: %s\n", m.c_str());
    std::printf("%s on %s; validation %s, %zu messages\n",
                all_match ? "every frame matches the reference" : "MISMATCH against the reference",
                context.device_info().name.c_str(), renderer.validation() ? "on" : "off", messages.size());
    return all_match && messages.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool value = i + 1 < argc;
        if (a == "--frames" && value) options.frames = std::max(1, std::atoi(argv[++i]));
        else if (a == "--size" && value) options.size = uint32_t(std::clamp(std::atoi(argv[++i]), 16, 8192));
        else if (a == "--bench" && value) options.bench = std::max(0, std::atoi(argv[++i]));
        else if (a == "--out" && value) options.out = argv[++i];
        else {
            std::fprintf(stderr, "usage: host_renderer [--frames N] [--size S] [--bench N] [--out DIR]\n");
            return 2;
        }
    }
    try {
        return run(options);
    } catch (const Error& e) {
        std::fprintf(stderr, "host_renderer: %s\n", e.what());
        return 1;
    }
}
