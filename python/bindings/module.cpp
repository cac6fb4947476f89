// texturevlm._core: the engine for the Python package (python/texturevlm is the public API).
#include <nanobind/stl/string.h>

#include <string>

#include "python/bindings/bindings.h"
#include "engine/error.h"

NB_MODULE(_core, m) {
    m.doc() = "texturevlm's engine: layouts, and mip pyramids on the CPU reference, Vulkan and CUDA.";
    m.attr("__version__") = TVLM_VERSION;  // CMakeLists.txt's project(VERSION), as the wheel's
    // The one error type; its message says what was wrong and what to do.
    nanobind::exception<tvlm::Error>(m, "Error", PyExc_RuntimeError);
    tvlm::py::bind_chart(m);
    tvlm::py::bind_layouts(m);
    tvlm::py::bind_devices(m);
    tvlm::py::bind_cpu(m);
    tvlm::py::bind_vulkan(m);
    tvlm::py::bind_overlay(m);
    tvlm::py::bind_resize(m);
    tvlm::py::bind_image_files(m);
    tvlm::py::bind_differentiable(m);
    tvlm::py::bind_fields(m);
    tvlm::py::bind_cuda_arguments(m);
    tvlm::py::bind_cuda(m);
#ifdef TVLM_HAVE_VIDEO_FILES
    tvlm::py::bind_video(m);
#else
    m.def(
        "video_built", [] { return false; }, "Whether this build reads video files (FFmpeg was found).");
    m.def(
        "video_unavailable",
        [] {
            return std::string(
                "this texturevlm was built without FFmpeg's development files: install libavformat-dev, "
                "libavcodec-dev and libswscale-dev (Debian/Ubuntu) and reinstall it (pip install .)");
        },
        "'' where FFmpeg's libraries load (they are loaded at run time), else why not and what to install.");
#endif
}
