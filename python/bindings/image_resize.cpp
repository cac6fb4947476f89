// The image processors' CUDA kernel for Python (cuda/image_resize.h): the target of a
// resize (what python/texturevlm/processors computes from a model's config) and the
// software bicubic path straight from a tensor. The texture path is CudaPyramid.resize.
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <string>

#include "bindings.h"
#include "error.h"
#ifdef TVLM_HAVE_CUDA
#include "cuda_calls.h"
#include "image_resize.h"
#endif

namespace tvlm::py {

#ifdef TVLM_HAVE_CUDA
namespace {

TensorDtype output_dtype(const std::string& name) {
    if (name == "float32") return TensorDtype::f32;
    if (name == "float16") return TensorDtype::f16;
    if (name == "bfloat16") return TensorDtype::bf16;
    throw Error("processor outputs are float32, float16 or bfloat16, not " + name);
}

std::array<float, 3> three(const float (&v)[3]) { return {v[0], v[1], v[2]}; }
void set_three(float (&v)[3], const std::array<float, 3>& from) {
    for (int c = 0; c < 3; ++c) v[c] = from[c];
}

}  // namespace

void bind_resize(nb::module_& m) {
    nb::class_<ResizeTarget>(m, "ResizeTarget", "Where a processor's resized, normalized pixels go (cuda/image_resize.h).")
        .def(nb::init<>())
        .def_rw("images", &ResizeTarget::images)
        .def_rw("first_layer", &ResizeTarget::first_layer)
        .def_rw("resized_width", &ResizeTarget::resized_width)
        .def_rw("resized_height", &ResizeTarget::resized_height)
        .def_rw("crop_x", &ResizeTarget::crop_x)
        .def_rw("crop_y", &ResizeTarget::crop_y)
        .def_rw("width", &ResizeTarget::width)
        .def_rw("height", &ResizeTarget::height)
        .def_prop_rw(
            "merged_patches", [](const ResizeTarget& t) { return t.layout == ResizeLayout::merged_patches; },
            [](ResizeTarget& t, bool merged) { t.layout = merged ? ResizeLayout::merged_patches : ResizeLayout::planar; })
        .def_rw("patch_size", &ResizeTarget::patch_size)
        .def_rw("merge_size", &ResizeTarget::merge_size)
        .def_rw("temporal_patch_size", &ResizeTarget::temporal_patch_size)
        .def_rw("first_time", &ResizeTarget::first_time)
        .def_rw("times", &ResizeTarget::times)
        .def_rw("image_stride", &ResizeTarget::image_stride)
        .def_rw("multiply", &ResizeTarget::multiply)
        .def_prop_rw(
            "subtract", [](const ResizeTarget& t) { return three(t.subtract); },
            [](ResizeTarget& t, const std::array<float, 3>& v) { set_three(t.subtract, v); })
        .def_prop_rw(
            "divide", [](const ResizeTarget& t) { return three(t.divide); },
            [](ResizeTarget& t, const std::array<float, 3>& v) { set_three(t.divide, v); })
        .def_rw("round_to_byte", &ResizeTarget::round_to_byte)
        .def_prop_rw(
            "out_dtype",
            [](const ResizeTarget& t) {
                return std::string(t.out_dtype == TensorDtype::f16    ? "float16"
                                   : t.out_dtype == TensorDtype::bf16 ? "bfloat16"
                                                                      : "float32");
            },
            [](ResizeTarget& t, const std::string& name) { t.out_dtype = output_dtype(name); })
        .def_prop_rw(
            "out", [](const ResizeTarget& t) { return reinterpret_cast<uintptr_t>(t.out); },
            [](ResizeTarget& t, uintptr_t out) { t.out = reinterpret_cast<void*>(out); });
    m.def(
        "resize_bicubic",
        [](int device, uintptr_t data, const std::string& dtype, const std::vector<int64_t>& strides,
           uint32_t channels, uint32_t width, uint32_t height, const ResizeTarget& target, uintptr_t stream) {
            const DeviceGuard guard(device);
            resize_bicubic(tensor_view(data, dtype, strides, channels), width, height, target, stream_of(stream));
        },
        nb::arg("device"), nb::arg("data"), nb::arg("dtype"), nb::arg("strides"), nb::arg("channels"),
        nb::arg("width"), nb::arg("height"), nb::arg("target"), nb::arg("stream"),
        "A processor's output from a CUDA tensor with PyTorch's antialiased bicubic weights (strides: b, c, y, x).");
}

#else

void bind_resize(nb::module_&) {}

#endif

}  // namespace tvlm::py
