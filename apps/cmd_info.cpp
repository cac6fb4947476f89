// tvlm info: what this machine offers texturevlm.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "apps/args.h"
#include "apps/commands.h"
#include "interop/cuda_match.h"
#include "engine/core/device_choice.h"
#include "interop/gl/egl_context.h"
#include "engine/core/instance.h"
#include "apps/json.h"
#ifdef TVLM_HAVE_CUDA
#include "interop/interop_probe.h"
#endif

namespace tvlm {

namespace {

constexpr const char* kHelp =
    "usage: tvlm info [--json] [--validation]\n"
    "Lists the Vulkan loader version and every Vulkan device: type, API version, driver,\n"
    "UUID, whether image memory and timeline semaphores can be exported as fds, whether\n"
    "texturevlm can use it (and why not), and the CUDA device with the same UUID.\n";

std::string cuda_text(const CudaMatch& m) {
    if (m.ordinal) return "CUDA device " + std::to_string(*m.ordinal) + " (" + m.name + ")";
    if (!m.cuda_built) return "none (" + m.unavailable + ")";
    return m.unavailable.empty() ? "none (no CUDA device has this UUID)" : "none (" + m.unavailable + ")";
}

// Runs the interop probe only where a CUDA device matches (it creates a context there).
std::string interop_text(const DeviceInfo& d, const CudaMatch& m, bool* works) {
    *works = false;
    if (!m.ordinal) return "no (no CUDA device with this UUID)";
#ifdef TVLM_HAVE_CUDA
    const InteropProbe probe = probe_interop(d);
    *works = probe.works;
    return (probe.works ? "yes: " : "no: ") + probe.detail;
#else
    (void)d;
    return "no (built without CUDA)";
#endif
}

// The OpenGL side: EGL devices and the renderer of a headless 4.5 context on the first.
struct EglSummary {
    std::vector<EglDevice> devices;
    std::string renderer, error;
};

EglSummary egl_summary() {
    EglSummary s;
    try {
        s.devices = egl_devices();
        const EglContext context;
        s.renderer = context.renderer() + ", OpenGL " + context.version();
    } catch (const std::exception& e) { s.error = e.what(); }
    return s;
}

std::string egl_device_text(const EglDevice& d) {
    if (d.cuda_device >= 0) return "CUDA device " + std::to_string(d.cuda_device);
    return d.software ? "software (Mesa)" : "no CUDA match";
}

}  // namespace

int run_info(int argc, char** argv) {
    const Args args(argc, argv, 2, {}, {"json", "validation", "help"});
    if (args.flag("help")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    Instance instance(args.flag("validation") || validation_requested_by_env());
    const auto& devices = instance.devices();
    const DeviceSelector any;
    if (args.flag("json")) {
        std::printf("{\n  \"vulkan_loader\": \"%s\",\n  \"devices\": [",
                    api_version_string(instance.api_version()).c_str());
        for (size_t i = 0; i < devices.size(); ++i) {
            const DeviceInfo& d = devices[i];
            const CudaMatch m = match_cuda_device(d);
            const std::string why = rejection_reason(d, any);
            bool works = false;
            const std::string interop = interop_text(d, m, &works);
            std::printf(
                "%s\n    {\"index\": %u, \"name\": %s, \"type\": \"%s\", \"api\": \"%s\", \"driver\": %s, "
                "\"uuid\": \"%s\", \"memory_fd_export\": %s, \"semaphore_fd_export\": %s, "
                "\"usable\": %s, \"unusable_reason\": %s, \"cuda_built\": %s, \"cuda_device\": %s, "
                "\"cuda_unavailable\": %s, \"interop_works\": %s, \"interop\": %s}",
                i ? "," : "", d.index, json_quote(d.name).c_str(), d.type.c_str(),
                api_version_string(d.api_version).c_str(), json_quote(d.driver).c_str(), d.uuid.str().c_str(),
                json_bool(d.memory_fd_export), json_bool(d.semaphore_fd_export), json_bool(why.empty()),
                json_quote(why).c_str(), json_bool(m.cuda_built),
                m.ordinal ? std::to_string(*m.ordinal).c_str() : "null", json_quote(m.unavailable).c_str(),
                json_bool(works), json_quote(interop).c_str());
        }
        const EglSummary egl = egl_summary();
        std::printf("\n  ],\n  \"egl\": {\"devices\": [");
        for (size_t i = 0; i < egl.devices.size(); ++i)
            std::printf("%s{\"index\": %d, \"cuda_device\": %d, \"software\": %s}", i ? ", " : "", egl.devices[i].index,
                        egl.devices[i].cuda_device, json_bool(egl.devices[i].software));
        std::printf("], \"opengl\": %s, \"error\": %s}\n}\n", json_quote(egl.renderer).c_str(),
                    json_quote(egl.error).c_str());
        return 0;
    }
    std::printf("Vulkan loader %s, %zu device(s)\n", api_version_string(instance.api_version()).c_str(),
                devices.size());
    for (const DeviceInfo& d : devices) {
        const std::string why = rejection_reason(d, any);
        std::printf("\n[%u] %s (%s, Vulkan %s)\n", d.index, d.name.c_str(), d.type.c_str(),
                    api_version_string(d.api_version).c_str());
        std::printf("    driver               %s\n", d.driver.c_str());
        std::printf("    UUID                 %s\n", d.uuid.str().c_str());
        std::printf("    memory fd export     %s\n", d.memory_fd_export ? "yes" : "no");
        std::printf("    semaphore fd export  %s\n", d.semaphore_fd_export ? "yes" : "no");
        std::printf("    usable               %s\n", why.empty() ? "yes" : ("no: " + why).c_str());
        const CudaMatch m = match_cuda_device(d);
        bool works = false;
        std::printf("    CUDA match           %s\n", cuda_text(m).c_str());
        std::printf("    Vulkan -> CUDA       %s\n", interop_text(d, m, &works).c_str());
    }
    if (devices.empty()) std::printf("no Vulkan device: install mesa-vulkan-drivers or the NVIDIA driver\n");
    const EglSummary egl = egl_summary();
    std::printf("\nEGL %zu device(s)\n", egl.devices.size());
    for (const EglDevice& d : egl.devices) std::printf("[%d] %s\n", d.index, egl_device_text(d).c_str());
    std::printf("    OpenGL (headless)    %s\n",
                egl.error.empty() ? egl.renderer.c_str() : ("no: " + egl.error).c_str());
    return 0;
}

}  // namespace tvlm
