// The typed arguments of the CUDA calls, each checked once, when Python makes it:
// TensorView (a tensor by pointer, dtype and strides) and CudaPatchSampler (a layout with
// its records on a device: the one sampler every patch call goes through). Calls then take
// these objects, not a dozen positional scalars.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "python/bindings/bindings.h"
#ifdef TVLM_HAVE_CUDA
#include "cuda_pipelines/cuda_patch_sampler.h"
#include "python/bindings/cuda_calls.h"
#endif

namespace tvlm::py {

#ifdef TVLM_HAVE_CUDA
void bind_cuda_arguments(nb::module_& m) {
    nb::class_<TensorView>(m, "TensorView",
                           "A CUDA tensor as the engine reads or writes it: element (b, c, y, x) lies "
                           "b*strides[0] + c*strides[1] + y*strides[2] + x*strides[3] elements from `data`.")
        .def(
            "__init__",
            [](TensorView* self, uintptr_t data, const std::string& dtype, const std::vector<int64_t>& strides,
               uint32_t channels) { new (self) TensorView(tensor_view(data, dtype, strides, channels)); },
            nb::arg("data"), nb::arg("dtype"), nb::arg("strides"), nb::arg("channels"),
            "Throws Error for a null pointer, a dtype other than uint8, float16, bfloat16 or float32, other than "
            "four strides, or channels other than 3 or 4.")
        .def_prop_ro("data", [](const TensorView& t) { return reinterpret_cast<uintptr_t>(t.data); })
        .def_ro("channels", &TensorView::channels);
    nb::class_<CudaPatchSampler>(m, "CudaPatchSampler",
                                 "A layout's patch sampler on one CUDA device: the layout and its records, which "
                                 "the caller keeps in device memory for the sampler's life.")
        .def(
            "__init__",
            [](CudaPatchSampler* self, const PatchLayout& layout, uintptr_t records) {
                new (self) CudaPatchSampler(layout, reinterpret_cast<const gpu::PatchGpu*>(records));
            },
            nb::arg("layout"), nb::arg("records"),
            "Borrows `records` (the layout's records in CUDA memory, kept alive by the caller). Throws Error for a "
            "layout without patches or a null pointer.")
        .def_prop_ro("gradients", &CudaPatchSampler::gradients);
}
#else
void bind_cuda_arguments(nb::module_&) {}
#endif

}  // namespace tvlm::py
