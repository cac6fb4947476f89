// The overlay renderer for Python: a scene (the JSON schema of tvlm overlay, from a dict)
// into shape records, optionally linked by a KNN graph kept across frames; drawn over RGBA8
// or RGBA16F frames in place: host arrays by Vulkan compute or the CPU reference, CUDA memory by the
// CUDA kernels on the caller's stream. texturevlm/overlay.py is the API.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "context.h"
#include "error.h"
#include "overlay/knn_graph.h"
#include "overlay/overlay_reference.h"
#include "overlay/overlay_renderer.h"
#include "overlay/overlay_scene.h"
#include "overlay/overlay_scene_json.h"
#include "vulkan_device.h"
#ifdef TVLM_HAVE_CUDA
#include "cuda_calls.h"
#include "cuda_overlay.h"
#endif

namespace tvlm::py {

namespace {

using Frame = nb::ndarray<nb::ndim<3>, nb::c_contig, nb::device::cpu>;  // uint8 or float16

// A scene's shapes for one frame size, and how many KNN links it got.
struct OverlayShapes {
    std::vector<gpu::OverlayShape> shapes;
    uint32_t width = 0, height = 0;
    size_t links = 0;
};

// uint8 frames are RGBA8 (sRGB where asked), float16 ones RGBA16F, blended as stored.
Format overlay_format(const std::string& dtype, bool srgb) {
    if (dtype == "uint8") return srgb ? Format::rgba8_srgb : Format::rgba8_unorm;
    if (dtype != "float16") throw Error("overlays draw on uint8 (RGBA8) or float16 (RGBA16F) frames, not " + dtype);
    if (srgb) throw Error("srgb=True is for uint8 frames: float16 frames hold linear light and blend as stored");
    return Format::rgba16f;
}

// The links' graph, kept across frames for hysteresis.
class KnnLinks {
public:
    KnnLinks(uint32_t k, uint32_t hysteresis, float width) : graph_({.k = k, .hysteresis = hysteresis}), width_(width) {}
    size_t link(OverlaySceneFile& file) { return link_points(file.scene, file.point_tracks, graph_, width_); }

private:
    KnnGraph graph_;
    float width_;
};

OverlayShapes shapes_of(const std::string& json, uint32_t width, uint32_t height, KnnLinks* links) {
    OverlaySceneFile file = parse_overlay_scene(json, "the scene");
    OverlayShapes out{{}, width, height, 0};
    if (links) out.links = links->link(file);
    out.shapes = overlay_shapes(file.scene, width, height);
    return out;
}

// The frame's format (uint8: RGBA8, sRGB where asked; float16: RGBA16F) after checking it
// holds the shapes' [H, W, 4].
Format check_frame(const Frame& frame, const OverlayShapes& s, bool srgb) {
    if (frame.shape(2) != 4 || frame.shape(0) != s.height || frame.shape(1) != s.width)
        throw Error("the frame is [" + std::to_string(frame.shape(0)) + ", " + std::to_string(frame.shape(1)) + ", " +
                    std::to_string(frame.shape(2)) + "]; the shapes were made for [" + std::to_string(s.height) + ", " +
                    std::to_string(s.width) + ", 4]");
    return overlay_format(frame.dtype() == nb::dtype<uint8_t>() ? "uint8"
                          : frame.dtype() == component_dtype(ComponentType::f16) ? "float16"
                                                                                   : "another dtype",
                          srgb);
}

std::span<uint8_t> bytes_of(Frame& frame) {
    return {static_cast<uint8_t*>(frame.data()), frame.nbytes()};
}

void draw_cpu(const OverlayShapes& s, Frame frame, bool srgb) {
    const Format format = check_frame(frame, s, srgb);
    if (format == Format::rgba16f)
        draw_overlay_reference_f16(s.shapes, {static_cast<uint16_t*>(frame.data()), frame.size()}, s.width, s.height);
    else draw_overlay_reference(s.shapes, bytes_of(frame), s.width, s.height, srgb);
}

void draw_vulkan(VulkanDevice& device, const OverlayShapes& s, Frame frame, bool srgb) {
    const Format format = check_frame(frame, s, srgb);
    draw_overlay_on_host(device.context(), s.shapes, bytes_of(frame), s.width, s.height, format);
}

}  // namespace

void bind_overlay(nb::module_& m) {
    using Release = nb::call_guard<nb::gil_scoped_release>;
    nb::class_<OverlayShapes>(m, "OverlayShapes", "A scene's shape records for one frame size.")
        .def_prop_ro("count", [](const OverlayShapes& s) { return s.shapes.size(); })
        .def_ro("links", &OverlayShapes::links)
        .def_ro("width", &OverlayShapes::width)
        .def_ro("height", &OverlayShapes::height);
    nb::class_<KnnLinks>(m, "KnnLinks", "A KNN graph over tracked points, kept across frames (hysteresis).")
        .def(nb::init<uint32_t, uint32_t, float>(), nb::arg("k"), nb::arg("hysteresis"), nb::arg("width"));
    m.def("overlay_shapes", &shapes_of, nb::arg("json"), nb::arg("width"), nb::arg("height"),
          nb::arg("links").none() = nb::none());
    m.def("overlay_draw_cpu", &draw_cpu, nb::arg("shapes"), nb::arg("frame"), nb::arg("srgb"), Release());
    m.def("overlay_draw_vulkan", &draw_vulkan, nb::arg("device"), nb::arg("shapes"), nb::arg("frame"), nb::arg("srgb"),
          Release());
#ifdef TVLM_HAVE_CUDA
    nb::class_<CudaOverlay>(m, "CudaOverlay", "The overlay renderer's CUDA kernels and their buffers.")
        .def("__init__",
             [](CudaOverlay* o, int device) {
                 const DeviceGuard guard(device);  // its event belongs to the frames' device
                 new (o) CudaOverlay();
             },
             nb::arg("device"))
        .def("draw",
             [](CudaOverlay& o, int device, const OverlayShapes& s, uintptr_t frame, size_t pitch, const std::string& dtype,
                bool srgb, uintptr_t stream) {
                 const DeviceGuard guard(device);
                 o.draw(s.shapes, reinterpret_cast<void*>(frame), pitch, s.width, s.height, overlay_format(dtype, srgb),
                        stream_of(stream));
             },
             nb::arg("device"), nb::arg("shapes"), nb::arg("frame"), nb::arg("pitch_bytes"), nb::arg("dtype"),
             nb::arg("srgb"), nb::arg("stream"));
#endif
}

}  // namespace tvlm::py
