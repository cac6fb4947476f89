// tvlm: the texturevlm command line.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "apps/commands.h"
#include "engine/error.h"
#include "apps/output_files.h"

namespace {

constexpr const char* kUsage =
    "tvlm: feed vision-language models from GPU texture hardware\n"
    "\n"
    "usage: tvlm <command> [options]   (tvlm <command> --help for its options; tvlm --version)\n"
    "\n"
    "commands:\n"
    "  info     Vulkan version, devices, their UUIDs, fd export support, CUDA match\n"
    "  mips     build a mip chain on the GPU and write every level as PNG\n"
    "  sample   patches (level grid, foveated, anisotropic) as a NumPy tensor + metadata\n"
    "  video    a video file or stream to foveated patches per frame, updating what changed\n"
    "  overlay  boxes, lines, trails, curved links, points and labels (JSON) drawn over an image\n"
    "  bench    benchmarks (mips, sample, video, grad, fields, overlay, ...): each figure next to its floor\n"
    "\n"
    "environment:\n"
    "  TVLM_VALIDATION=1      turn the Vulkan validation layers on\n"
    "  TVLM_VULKAN_LOADER=P   load the Vulkan loader from P instead of libvulkan.so.1\n"
    "  VK_DRIVER_FILES=J      use the Vulkan driver (ICD json) J\n";

}  // namespace

int main(int argc, char** argv) {
    tvlm::remove_temporaries_on_signals();  // first, before any library starts a thread
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
        std::fputs(kUsage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "-V")) {
        std::printf("tvlm %s (texturevlm)\n", TVLM_VERSION);
        return 0;
    }
    const std::string command = argv[1];
    try {
        if (command == "info") return tvlm::run_info(argc, argv);
        if (command == "mips") return tvlm::run_mips(argc, argv);
        if (command == "bench") return tvlm::run_bench(argc, argv);
        if (command == "sample") return tvlm::run_sample(argc, argv);
        if (command == "overlay") return tvlm::run_overlay(argc, argv);
        if (command == "video") {
#ifdef TVLM_HAVE_VIDEO_FILES
            return tvlm::run_video(argc, argv);
#else
            throw tvlm::Error(
                "this tvlm was built without FFmpeg's libraries: install libavformat-dev, "
                "libavcodec-dev and libswscale-dev and rebuild");
#endif
        }
        std::fprintf(
            stderr,
            "tvlm: unknown command '%s' (expected info, mips, sample, video, overlay or bench; see tvlm --help)\n",
            command.c_str());
        return 2;
    } catch (const tvlm::Error& e) {
        std::fprintf(stderr, "tvlm %s: error: %s\n", command.c_str(), tvlm::with_output_names(e.what()).c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tvlm %s: internal error: %s\n", command.c_str(), e.what());
        return 3;
    }
}
