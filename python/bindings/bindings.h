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
void bind_differentiable(nb::module_& m);  // sample_points: the CPU reference; CUDA kernels where built
void bind_fields(nb::module_& m);          // Gaussian fields: the CPU reference; CUDA kernels where built
void bind_overlay(nb::module_& m);         // the overlay renderer: CPU, Vulkan; CUDA where built
void bind_resize(nb::module_& m);          // processors' resizes: torch's uint8 CPU resize; CUDA's where built
void bind_cuda_arguments(nb::module_& m);  // TensorView, CudaPatchSampler; nothing without CUDA
void bind_cuda(nb::module_& m);            // without a CUDA build: cuda_built() is False, nothing else
void bind_image_files(nb::module_& m);     // PNG / JPEG bytes and files decoded for the processors
void bind_video(nb::module_& m);           // where FFmpeg was found (TVLM_HAVE_VIDEO_FILES)

}  // namespace tvlm::py
