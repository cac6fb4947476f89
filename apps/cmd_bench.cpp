// tvlm bench SUITE: benchmark programs (never timed tests). Each figure is printed next to
// its floor measured in the same run.
#include <cstdio>
#include <string>

#include "args.h"
#include "commands.h"
#include "error.h"

namespace tvlm {

#ifdef TVLM_HAVE_CUDA
int run_bench_interop(const Args& args);
int run_bench_sample(const Args& args);
int run_bench_mips(const Args& args);
#endif

namespace {
constexpr const char* kHelp =
    "usage: tvlm bench interop|sample|mips [--frames N] [--json FILE] [--plot FILE.png] [--device D]\n"
    "  interop   Vulkan -> CUDA hand-over per frame (timeline semaphores vs host waits) and\n"
    "            steady-state frames/s of upload + blit mips + 1M CUDA samples at 1024^2, 4096^2\n"
    "  sample    patch sampling GPU time: CUDA texture unit vs software filtering vs Vulkan\n"
    "            compute (273 foveated patches of a 4096^2 frame, a batch of 32, 1M samples)\n"
    "  mips      mip chain GPU time: single-pass box downsampler (Vulkan compute, CUDA) vs\n"
    "            blit chains, 1024^2 to 4096^2, RGBA8/sRGB/RGBA16F, 32 layers, a dirty rectangle\n"
    "--json writes the rows, --plot a bar chart of them (sample and mips).\n"
    "Needs an NVIDIA GPU and a build with CUDA.\n";
}

int run_bench(int argc, char** argv) {
    const Args args(argc, argv, 2, {"frames", "json", "plot", "device"}, {"help"});
    if (args.flag("help") || args.positionals().empty()) {
        std::fputs(kHelp, args.flag("help") ? stdout : stderr);
        return args.flag("help") ? 0 : 2;
    }
    const std::string suite = args.positionals()[0];
    if (suite != "interop" && suite != "sample" && suite != "mips")
        throw Error("unknown benchmark suite '" + suite + "': expected interop, sample or mips");
    if (suite == "interop" && args.option("plot"))
        throw Error("--plot draws the sample and mips suites; interop prints its table only");
#ifdef TVLM_HAVE_CUDA
    if (suite == "mips") return run_bench_mips(args);
    return suite == "sample" ? run_bench_sample(args) : run_bench_interop(args);
#else
    throw Error("tvlm was built without CUDA: the benchmarks need nvcc at configure time and an NVIDIA GPU");
#endif
}

}  // namespace tvlm
