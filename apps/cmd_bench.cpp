// tvlm bench [SUITE...]: the benchmark programs (never timed tests). One run, one table:
// every figure next to its floor measured in the same run and next to the alternatives.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "apps/args.h"
#include "apps/bench/bench_plot.h"
#include "apps/bench/bench_timing.h"
#include "apps/bench/bench_without_cuda.h"
#include "apps/commands.h"
#include "engine/error.h"
#include "engine/image_files/image_files.h"
#include "apps/output_files.h"
#ifdef TVLM_HAVE_CUDA
#include "apps/bench/bench_gpu.h"
#include "cuda/cuda_devices.h"
#endif

namespace tvlm {

namespace {

constexpr const char* kHelp =
    "usage: tvlm bench [all | mips handover sample video grad video-file fields overlay ...] [--json FILE] [--plot "
    "FILE.png]\n"
    "                  [--device D] [--devices all|I,J,...] [--only TEXT]\n"
    "  mips      mip chain GPU time: box downsampler (Vulkan compute, CUDA on imported and CUDA-only\n"
    "            arrays) vs Vulkan blit and glGenerateMipmap; 1024^2..4096^2, RGBA8/sRGB/RGBA16F, 32 layers\n"
    "  handover  per-frame cost of handing a texture to CUDA: Vulkan timeline semaphores or host waits,\n"
    "            GL map/unmap per frame or kept mapped, against CUDA alone\n"
    "  sample    patch sampling GPU time: CUDA texture unit vs software filtering vs Vulkan compute\n"
    "  video     frame -> mips -> 273 foveated patches per image, wall time per frame, from host or CUDA\n"
    "            memory, Vulkan / OpenGL / CUDA-only; 1024^2..4096^2, RGBA8/RGBA16F, batch 1 and 32; and, where\n"
    "            --devices lists two or more CUDA devices (default: all), 32 x 4096^2 and 64 x 1024^2 batches\n"
    "            sharded over them next to one GPU\n"
    "  grad      differentiable sampling, each step of forward + backward and the whole: 1M samples at\n"
    "            per-sample LOD (4096^2 RGBA, 1024^2 x 40 channels, float32), 273 foveated patches x 1 and 32\n"
    "  video-file  an H.264 file (1080p, 4K; made with libx264) decoded on the CPU and on NVDEC, then\n"
    "            the engine's full and partial (changed tiles only) pipelines to 273 patches per frame\n"
    "  fields    the fused Gaussian-field kernels, forward and backward: N = 1000 x B = 500 and\n"
    "            N = 10^4 x B = 10^6, 3D, float32, next to their exponential and arithmetic floors\n"
    "  overlay   the overlay renderer on a 3840x2160 frame: 100 and 1000 boxes, 100 points with KNN\n"
    "            links, the design's whole frame (CUDA and Vulkan), the KNN graph of 5000 points (CPU)\n"
    "Without a suite: all of them. --json writes every row, --plot a bar chart per suite in one PNG.\n"
    "--only TEXT: mips and video run only the jobs whose name contains TEXT (e.g. 1920x1080, \"1024^2 rgba8 x 32\").\n"
    "Needs an NVIDIA GPU and a build with CUDA. python/texturevlm/bench/torch_baseline.py times the PyTorch way\n"
    "(python -m texturevlm.bench grad for the grad jobs).\n";

const std::vector<std::pair<std::string, std::string>> kSuites = {
    {"mips", "GPU time per chain (50 back to back; blit and GL 10)"},
    {"handover", "wall time per frame, 400 frames a run"},
    {"sample", "GPU time per launch (50 back to back)"},
    {"video", "wall time per frame (per batch when sharded), frames pipelined, host waits only at the end of a run"},
    {"grad", "GPU time per step (5 back to back)"},
    {"video-file", "wall time per frame, each run decoding the whole file from its start"},
    {"fields", "GPU time per call (50 back to back; 3 for B = 1M)"},
    {"overlay", "CUDA: GPU time per draw (50 back to back); Vulkan: wall time per draw; KNN: host time"},
};

#ifdef TVLM_HAVE_CUDA
// video-file needs FFmpeg's libraries: an error where asked for by name, a note in `all`.
std::vector<Row> video_file_rows(BenchGpu& gpu, bool asked) {
#ifdef TVLM_HAVE_VIDEO_FILES
    (void)asked;
    return bench_video_file(gpu);
#else
    (void)gpu;
    if (asked)
        throw Error(
            "tvlm was built without FFmpeg's libraries: install libavformat-dev, libavcodec-dev and "
            "libswscale-dev and rebuild for video-file");
    std::printf("video-file: left out (tvlm was built without FFmpeg's libraries)\n");
    return {};
#endif
}
#endif

// No NVIDIA GPU (`why`): the rows that need none, and a note naming the suites left out.
int run_without_cuda(const Args& args, const std::vector<std::string>& suites, const std::string& why,
                     const std::string& json_file, const std::string& plot_file, OutputFiles& outputs) {
    std::vector<std::string> runnable, left_out;
    for (const std::string& suite : suites)
        (std::find(kSuitesWithoutCuda.begin(), kSuitesWithoutCuda.end(), suite) != kSuitesWithoutCuda.end() ? runnable
                                                                                                            : left_out)
            .push_back(suite);
    const auto joined = [](const std::vector<std::string>& names) {
        std::string text;
        for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
        return text;
    };
    if (runnable.empty())
        throw Error("the " + joined(left_out) + " benchmark" + (left_out.size() > 1 ? "s need" : " needs") +
                    " an NVIDIA GPU: " + why);
    std::fprintf(stderr, "note: %s; running what needs none (Vulkan compute, blits, OpenGL, the CPU) of: %s%s%s\n",
                 why.c_str(), joined(runnable).c_str(),
                 left_out.empty() ? "" : "; left out (they time CUDA): ", joined(left_out).c_str());
    BenchMachine machine;
    const std::vector<Row> rows = bench_without_cuda(args, runnable, machine);
    char title[512];
    std::snprintf(title, sizeof title,
                  "tvlm bench on %s (%s) without an NVIDIA GPU: Vulkan buffer copy %.1f GB/s; median and min of the "
                  "runs after warm-up (%d on a GPU, fewer on a CPU device)",
                  machine.gpu.c_str(), machine.driver.c_str(), machine.copy_bandwidth * 1e-9, kRuns);
    const std::vector<std::pair<std::string, std::string>> notes = {
        {"mips", "GPU time per chain (Vulkan and GL timestamps)"},
        {"sample", "GPU time per launch (Vulkan timestamps)"},
        {"overlay", "Vulkan: wall time per draw; KNN: host time"}};
    print_rows(title, rows, notes);
    if (!json_file.empty()) write_rows_json(json_file, machine, rows);
    if (!plot_file.empty()) {
        std::vector<Rgba8Image> charts;
        for (const auto& [suite, note] : notes) {
            std::vector<Row> suite_rows;
            for (const Row& r : rows)
                if (r.suite == suite) suite_rows.push_back(r);
            if (!suite_rows.empty()) charts.push_back(bar_chart("tvlm bench " + suite, suite_rows, note));
        }
        write_png(plot_file, stack_charts(charts));
    }
    outputs.commit();
    return 0;
}

}  // namespace

int run_bench(int argc, char** argv) {
    const Args args(argc, argv, 2, {"json", "plot", "device", "devices", "only"}, {"help"});
    if (args.flag("help")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    std::vector<std::string> suites;
    bool named = false;
    for (const std::string& name : args.positionals()) {
        if (name == "all") {
            suites.clear();
            break;
        }
        bool known = false;
        for (const auto& [suite, note] : kSuites) known = known || suite == name;
        if (!known)
            throw Error("unknown benchmark suite '" + name +
                        "': expected all, mips, handover, sample, video, grad, video-file, fields or overlay");
        suites.push_back(name);
        named = true;
    }
    if (suites.empty())
        for (const auto& [suite, note] : kSuites) suites.push_back(suite);
    // Checked before minutes of measuring; written under temporary names, put in place together.
    OutputFiles outputs;
    const std::string json_file = args.option("json") ? outputs.file(*args.option("json"), "--json") : "";
    const std::string plot_file = args.option("plot") ? outputs.file(*args.option("plot"), "--plot") : "";
#ifdef TVLM_HAVE_CUDA
    // The suites time CUDA against the alternatives with floors at CUDA's measured copy rate;
    // where there is no NVIDIA GPU, run what needs none and say plainly why the rest cannot.
    if (const CudaDeviceList cuda = list_cuda_devices(); cuda.devices.empty())
        return run_without_cuda(args, suites, cuda.unavailable_reason, json_file, plot_file, outputs);
    BenchGpu gpu(args);
    std::vector<Row> rows;
    std::vector<Rgba8Image> charts;
    for (const std::string& suite : suites) {
        std::vector<Row> suite_rows = suite == "mips"         ? bench_mips(gpu)
                                      : suite == "handover"   ? bench_handover(gpu)
                                      : suite == "sample"     ? bench_sample(gpu)
                                      : suite == "grad"       ? bench_grad(gpu)
                                      : suite == "video-file" ? video_file_rows(gpu, named)
                                      : suite == "fields"     ? bench_fields(gpu)
                                      : suite == "overlay"    ? bench_overlay(gpu)
                                                              : bench_video(gpu);
        tag_rows(suite_rows, suite);  // the table's section and the JSON's "suite", for every suite alike
        for (const auto& [name, note] : kSuites)
            if (name == suite && args.option("plot"))
                charts.push_back(bar_chart("tvlm bench " + suite, suite_rows, note));
        rows.insert(rows.end(), suite_rows.begin(), suite_rows.end());
    }
    char title[512];
    std::snprintf(title, sizeof title,
                  "tvlm bench on %s (driver %s): device copy %.2f TB/s, pinned upload %.1f GB/s; median and min of %d "
                  "runs after warm-up",
                  gpu.machine.gpu.c_str(), gpu.machine.driver.c_str(), gpu.machine.copy_bandwidth * 1e-12,
                  gpu.machine.upload_bandwidth * 1e-9, kRuns);
    print_rows(title, rows, kSuites);
    if (!json_file.empty()) write_rows_json(json_file, gpu.machine, rows);
    if (!plot_file.empty()) write_png(plot_file, stack_charts(charts));
    outputs.commit();
    return 0;
#else
    (void)named;
    return run_without_cuda(args, suites, "this tvlm was built without CUDA (no nvcc at configure time)", json_file,
                            plot_file, outputs);
#endif
}

}  // namespace tvlm
