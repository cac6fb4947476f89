#pragma once
// The parts of the extension module texturevlm._core, one per concept.
#include <nanobind/nanobind.h>

namespace tvlm::py {

namespace nb = nanobind;

void bind_chart(nb::module_& m);
void bind_layouts(nb::module_& m);
void bind_devices(nb::module_& m);
void bind_cpu(nb::module_& m);
void bind_vulkan(nb::module_& m);
void bind_differentiable(nb::module_& m);
void bind_fields(
    nb::module_&
        m);  // Gaussian fields: the CPU reference; CUDA kernels where built  // sample_points: CPU reference; CUDA kernels where built
void bind_overlay(nb::module_& m);  // the overlay renderer: CPU, Vulkan; CUDA where built
void bind_resize(nb::module_& m);   // processors' CUDA resize; nothing without CUDA
void bind_cuda(nb::module_& m);
void bind_video(
    nb::module_&
        m);  // where FFmpeg was found (TVLM_HAVE_VIDEO_FILES)  // without a CUDA build: cuda_built() is False, nothing else

}  // namespace tvlm::py
