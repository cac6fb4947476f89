// Patch layouts for Python: the engine's PatchLayout, its records (the 32-byte patches every
// sampler reads) as a NumPy view, and its metadata.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "python/bindings/arrays.h"
#include "python/bindings/bindings.h"
#include "engine/sampling/patch_layouts.h"
#include "engine/sampling/tolerance.h"

namespace tvlm::py {

namespace {

std::vector<Fixation> fixations_of(const std::vector<std::pair<double, double>>& points) {
    std::vector<Fixation> fixations;
    for (const auto& [x, y] : points) fixations.push_back({x, y});
    return fixations;
}

}  // namespace

void bind_layouts(nb::module_& m) {
    nb::class_<PatchLayout>(m, "Layout", "A patch layout as the engine computed it (engine/sampling/patch_layouts.h).")
        .def_prop_ro("kind", [](const PatchLayout& l) { return std::string(l.kind); })
        .def_ro("width", &PatchLayout::width)
        .def_ro("height", &PatchLayout::height)
        .def_ro("patch_size", &PatchLayout::patch_size)
        .def_ro("images", &PatchLayout::images)
        .def_ro("patches_per_image", &PatchLayout::patches_per_image)
        .def_ro("levels_needed", &PatchLayout::levels_needed)
        .def_prop_ro("gradients", [](const PatchLayout& l) { return l.mode == SamplingMode::gradients; })
        .def_prop_ro(
            "records",
            [](nb::handle self) {
                auto& l = nb::cast<PatchLayout&>(self);
                return array_over(l.patches.data(), {l.patches.size(), sizeof(Patch)}, nb::dtype<uint8_t>(), self);
            },
            nb::rv_policy::automatic,
            "The patches as every sampler reads them: uint8 [images * N, 32], a view (no copy).")
        .def_prop_ro(
            "metadata",
            [](const PatchLayout& l) {
                return owned_array(patch_metadata(l), {l.images, l.patches_per_image, 5}, nb::dtype<float>());
            },
            nb::rv_policy::automatic,
            "float32 [images, N, 5]: (cu, cv, su, sv, level) per slot; padding slots are zeros with level -1.");

    m.def("sample_tolerance", &sample_tolerance, nb::arg("gradients"), nb::arg("half_output"), nb::arg("value"),
          "How far a GPU patch sample may be from the CPU reference's value (engine/sampling/tolerance.h).");
    m.def(
        "foveated_layout",
        [](uint32_t width, uint32_t height, const std::vector<std::pair<double, double>>& fixations, uint32_t budget,
           uint32_t patch_size, double m0, double e0, double bias, bool fill) {
            FoveatedParams p{fixations_of(fixations), budget, patch_size, m0, e0, bias, fill};
            return foveated_layout(width, height, p).layout;
        },
        nb::arg("width"), nb::arg("height"), nb::arg("fixations"), nb::arg("budget"), nb::arg("patch_size"),
        nb::arg("m0"), nb::arg("e0"), nb::arg("bias"), nb::arg("fill"));
    m.def(
        "grid_layout",
        [](uint32_t width, uint32_t height, uint32_t patch_size, uint32_t level) {
            return level_grid_layout(width, height, patch_size, level);
        },
        nb::arg("width"), nb::arg("height"), nb::arg("patch_size"), nb::arg("level"));
    m.def(
        "anisotropic_layout",
        [](uint32_t width, uint32_t height, uint32_t patch_size, uint32_t level, uint32_t elongation, bool vertical,
           std::optional<std::pair<double, double>> fixation, uint32_t count) {
            std::optional<Fixation> f;
            if (fixation) f = Fixation{fixation->first, fixation->second};
            return anisotropic_layout(width, height, {patch_size, level, elongation, vertical, f, count});
        },
        nb::arg("width"), nb::arg("height"), nb::arg("patch_size"), nb::arg("level"), nb::arg("elongation"),
        nb::arg("vertical"), nb::arg("fixation").none() = nb::none(), nb::arg("count") = 0);
    m.def(
        "resize_layout",
        [](uint32_t width, uint32_t height, uint32_t resized_width, uint32_t resized_height, uint32_t x, uint32_t y,
           uint32_t window_width, uint32_t window_height, uint32_t patch_size) {
            return resize_layout(width, height,
                                 {resized_width, resized_height, x, y, window_width, window_height, patch_size});
        },
        nb::arg("width"), nb::arg("height"), nb::arg("resized_width"), nb::arg("resized_height"), nb::arg("x"),
        nb::arg("y"), nb::arg("window_width"), nb::arg("window_height"), nb::arg("patch_size"));
    m.def(
        "batch_layouts",
        [](const std::vector<const PatchLayout*>& per_image, uint32_t min_count) {
            std::vector<PatchLayout> copies;
            for (const PatchLayout* l : per_image) copies.push_back(*l);
            return batch_layouts(copies, min_count);
        },
        nb::arg("per_image"), nb::arg("min_patches_per_image") = 0);
}

}  // namespace tvlm::py
