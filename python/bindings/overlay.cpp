// The overlay renderer for Python: a scene (the JSON schema of tvlm overlay, from a dict)
// into shape records, optionally linked by a KNN graph kept across frames; drawn over RGBA8
// or RGBA16F frames in place: host arrays by Vulkan compute or the CPU reference, CUDA memory by the
// CUDA kernels on the caller's stream, their KNN links made there too (CudaKnnGraph).
// texturevlm/overlay.py is the API.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "python/bindings/arrays.h"
#include "python/bindings/bindings.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/overlay/knn_graph.h"
#include "engine/overlay/overlay_reference.h"
#include "engine/overlay/overlay_renderer.h"
#include "engine/overlay/overlay_scene.h"
#include "engine/overlay/overlay_scene_json.h"
#include "engine/overlay/overlay_scene_reader.h"
#include "python/bindings/vulkan_device.h"
#ifdef TVLM_HAVE_CUDA
#include "python/bindings/cuda_calls.h"
#include "cuda_pipelines/cuda_knn_graph.h"
#include "cuda_pipelines/cuda_overlay.h"
#endif

namespace tvlm::py {

namespace {

using Frame = nb::ndarray<nb::ndim<3>, nb::c_contig, nb::device::cpu>;  // uint8 or float16

// A scene's shapes for one frame size, and how many KNN links it got on the host; or, for
// links made on the device, its points and where the links go among the shapes.
struct OverlayShapes {
    std::vector<gpu::OverlayShape> shapes;
    uint32_t width = 0, height = 0;
    size_t links = 0;
    std::vector<KnnPoint> points;  // device links: the scene's points with their track ids
    size_t curves_end = 0;         // device links: their place (after the scene's curves)
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
    KnnLinks(uint32_t k, uint32_t hysteresis, float width)
        : graph_({.k = k, .hysteresis = hysteresis}), width_(width) {}
    size_t link(OverlaySceneFile& file) { return link_points(file.scene, file.point_tracks, graph_, width_); }

private:
    KnnGraph graph_;
    float width_;
};

// The scene's shapes for a width x height frame, its points linked first where asked: by
// `links` on the host, or (`device_links`) later, on the device, from the points kept here.
OverlayShapes shapes_for(OverlaySceneFile& file, uint32_t width, uint32_t height, KnnLinks* links, bool device_links) {
    OverlayShapes out{{}, width, height, 0};
    if (links) out.links = links->link(file);
    out.shapes = overlay_shapes(file.scene, width, height, &out.curves_end);
    if (device_links) {
        out.points.reserve(file.scene.points.size());
        for (size_t i = 0; i < file.scene.points.size(); ++i)
            out.points.push_back({file.scene.points[i].x, file.scene.points[i].y, file.point_tracks[i]});
    }
    return out;
}

OverlayShapes shapes_of(const std::string& json, uint32_t width, uint32_t height, KnnLinks* links, bool device_links) {
    OverlaySceneFile file = parse_overlay_scene(json, "the scene");
    return shapes_for(file, width, height, links, device_links);
}

// A scene as Python holds it (dicts, lists or tuples, numbers, booleans, strings; NumPy
// scalars too) for read_overlay_scene_tree: read in place, no JSON text in between, which
// cost a large scene far more than drawing it. Called with the GIL held; nodes are borrowed
// from the caller's scene.
struct PythonTree {
    using Node = PyObject*;
    static bool valid(Node n) { return n != nullptr; }
    // Exact types first: their checks are inline, where the subclass checks are calls into
    // Python under the stable ABI (a scene reads a few of them per item).
    static bool is_object(Node n) { return PyDict_CheckExact(n) || PyDict_Check(n); }
    static bool is_array(Node n) {
        return PyList_CheckExact(n) || PyTuple_CheckExact(n) || PyList_Check(n) || PyTuple_Check(n);
    }
    template <class F>
    static void for_each_key(Node n, F f) {
        PyObject *key = nullptr, *value = nullptr;
        Py_ssize_t pos = 0;
        while (PyDict_Next(n, &pos, &key, &value)) {
            Py_ssize_t length = 0;
            const char* text = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, &length) : nullptr;
            if (!text) {
                PyErr_Clear();
                f(std::string_view("<a key that is not a string>"));
            } else f(std::string_view(text, size_t(length)));
        }
    }
    static size_t key_count(Node n) { return size_t(PyDict_Size(n)); }
    // A dict's items in one walk: cheaper than a lookup per schema key.
    template <class F>
    static void for_each_item(Node n, F f) {
        PyObject *key = nullptr, *value = nullptr;
        Py_ssize_t pos = 0;
        while (PyDict_Next(n, &pos, &key, &value)) f(key, value);
    }
    static std::string_view key_text(PyObject* key) {
        Py_ssize_t length = 0;
        const char* text = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, &length) : nullptr;
        if (!text) {
            PyErr_Clear();
            return "<a key that is not a string>";
        }
        return {text, size_t(length)};
    }
    // Keys are the schema's names, each made an interned Python string once (its hash kept and
    // the object kept for the process): a lookup hashes nothing.
    using Key = PyObject*;
    static Key key(const char* name) {
        PyObject* interned = PyUnicode_InternFromString(name);
        if (!interned) {
            PyErr_Clear();
            throw Error(std::string("out of memory making the scene key \"") + name + "\"");
        }
        return interned;
    }
    static Node find(Node n, Key key) {
        PyObject* value = PyDict_GetItemWithError(n, key);  // PyDict_GetItem saves and restores the error state
        if (!value) PyErr_Clear();                          // absent (a key's comparison cannot fail: both are str)
        return value;
    }
    // The limited API's functions, not the GET macros: the extension may be built for the
    // stable ABI (one wheel for Python 3.12 and later), where the macros do not exist.
    static size_t size(Node n) {
        return size_t(PyList_CheckExact(n) || PyList_Check(n) ? PyList_Size(n) : PyTuple_Size(n));
    }
    static Node at(Node n, size_t i) {
        return PyList_CheckExact(n) || PyList_Check(n) ? PyList_GetItem(n, Py_ssize_t(i))
                                                       : PyTuple_GetItem(n, Py_ssize_t(i));
    }
    // number() and integer() are inlined into the reader: called out of line, their optional
    // results went through the stack as a byte store then a wider load, a store-forwarding
    // stall on every value (most of a scene's read time, by perf).
    // A number: int or float, or a scalar with __float__ (NumPy's); not bool, str or a sequence.
    [[gnu::always_inline]] static std::optional<double> number(Node n) {
        if (PyFloat_CheckExact(n)) return PyFloat_AsDouble(n);
        if (PyLong_CheckExact(n)) {
            const double d = PyLong_AsDouble(n);
            if (d == -1.0 && PyErr_Occurred()) {  // past double's range
                PyErr_Clear();
                return std::numeric_limits<double>::infinity();
            }
            return d;
        }
        if (PyBool_Check(n)) return std::nullopt;
        if (PyFloat_Check(n)) return PyFloat_AsDouble(n);
        if (!PyLong_Check(n) && (!PyNumber_Check(n) || PySequence_Check(n))) return std::nullopt;
        const double d = PyLong_Check(n) ? PyLong_AsDouble(n) : PyFloat_AsDouble(n);
        if (d == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();  // an int past double's range, or a failing __float__
            return PyLong_Check(n) ? std::optional<double>(std::numeric_limits<double>::infinity()) : std::nullopt;
        }
        return d;
    }
    // A whole number: int or a scalar with __index__ (NumPy's integers); not bool.
    [[gnu::always_inline]] static std::optional<int64_t> integer(Node n) {
        if (PyLong_CheckExact(n)) {  // most bytes and ids: no index object made
            int overflow = 0;
            const long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
            if (!overflow && !(v == -1 && PyErr_Occurred())) return int64_t(v);
            PyErr_Clear();
            return std::nullopt;
        }
        const std::optional<PyObject*> index = as_index(n);
        if (!index) return std::nullopt;
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(*index, &overflow);
        Py_DECREF(*index);
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return std::nullopt;
        }
        return int64_t(v);
    }
    static std::optional<uint64_t> unsigned_integer(Node n) {
        const std::optional<PyObject*> index = as_index(n);
        if (!index) return std::nullopt;
        const unsigned long long v = PyLong_AsUnsignedLongLong(*index);  // negative: an error
        Py_DECREF(*index);
        if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
            PyErr_Clear();
            return std::nullopt;
        }
        return uint64_t(v);
    }
    static std::optional<bool> boolean(Node n) {
        return PyBool_Check(n) ? std::optional<bool>(n == Py_True) : std::nullopt;
    }
    static std::optional<std::string> string(Node n) {
        Py_ssize_t length = 0;
        const char* text = PyUnicode_Check(n) ? PyUnicode_AsUTF8AndSize(n, &length) : nullptr;
        if (!text) {
            PyErr_Clear();
            return std::nullopt;
        }
        return std::string(text, size_t(length));
    }

private:
    static std::optional<PyObject*> as_index(Node n) {  // a new reference
        if (PyBool_Check(n) || !PyIndex_Check(n)) return std::nullopt;
        PyObject* index = PyNumber_Index(n);
        if (!index) {
            PyErr_Clear();
            return std::nullopt;
        }
        return index;
    }
};

OverlayShapes shapes_of_scene(nb::handle scene, uint32_t width, uint32_t height, KnnLinks* links, bool device_links) {
    OverlaySceneFile file = read_overlay_scene_tree<PythonTree>(scene.ptr(), "the scene");
    return shapes_for(file, width, height, links, device_links);
}

// Detections as arrays (texturevlm.overlay.draw_bounding_boxes): boxes [N, 4] as (xmin,
// ymin, xmax, ymax) pixels, colours [N, 4] bytes, labels over each box's top edge (inside
// where that would leave the frame) on the box's colour; points [M, 2] with track ids [M]
// for the KNN links. Built straight into a scene: no JSON, which cost most of a large
// frame's time from Python.
using Floats2D = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Bytes2D = nb::ndarray<const uint8_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Tracks = nb::ndarray<const uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

struct BoxStyle {
    float width, radius, font_size, point_radius;
    uint8_t fill_alpha;
};

OverlayColor color_at(const Bytes2D& colors, size_t i) {
    const uint8_t* c = colors.data() + i * 4;
    return {c[0], c[1], c[2], c[3]};
}

OverlayShapes shapes_of_arrays(const Floats2D& boxes, const Bytes2D& box_colors, const std::vector<std::string>& labels,
                               const Floats2D& points, const Bytes2D& point_colors, const Tracks& tracks,
                               const BoxStyle& style, uint32_t width, uint32_t height, KnnLinks* links,
                               bool device_links) {
    const size_t n = boxes.shape(0), m = points.shape(0);
    if ((n && boxes.shape(1) != 4) || box_colors.shape(0) != n || (n && box_colors.shape(1) != 4))
        throw Error("boxes are [N, 4] (xmin, ymin, xmax, ymax) with colours [N, 4]");
    if (!labels.empty() && labels.size() != n)
        throw Error(std::to_string(labels.size()) + " labels for " + std::to_string(n) + " boxes: give one per box");
    if ((m && points.shape(1) != 2) || point_colors.shape(0) != m || tracks.shape(0) != m)
        throw Error("points are [M, 2] (x, y) with colours [M, 4] and track ids [M]");
    OverlaySceneFile file;
    OverlayScene& scene = file.scene;
    scene.boxes.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const float* b = boxes.data() + 4 * i;
        const OverlayColor color = color_at(box_colors, i);
        OverlayColor fill = color;
        fill.a = style.fill_alpha;
        scene.boxes.push_back(
            {(b[0] + b[2]) / 2, (b[1] + b[3]) / 2, b[2] - b[0], b[3] - b[1], style.radius, style.width, color, fill});
        if (labels.empty() || labels[i].empty()) continue;
        OverlayColor background = color;
        background.a = 200;
        const float above = b[1] - style.font_size;
        scene.labels.push_back(
            {b[0], above >= 0 ? above : b[1], style.font_size, labels[i], {255, 255, 255, 255}, background});
    }
    scene.points.reserve(m);
    for (size_t i = 0; i < m; ++i)
        scene.points.push_back(
            {points.data()[2 * i], points.data()[2 * i + 1], style.point_radius, color_at(point_colors, i)});
    file.point_tracks.assign(tracks.data(), tracks.data() + m);
    return shapes_for(file, width, height, links, device_links);
}

// The frame's format (uint8: RGBA8, sRGB where asked; float16: RGBA16F) after checking it
// holds the shapes' [H, W, 4].
Format check_frame(const Frame& frame, const OverlayShapes& s, bool srgb) {
    if (frame.shape(2) != 4 || frame.shape(0) != s.height || frame.shape(1) != s.width)
        throw Error("the frame is [" + std::to_string(frame.shape(0)) + ", " + std::to_string(frame.shape(1)) + ", " +
                    std::to_string(frame.shape(2)) + "]; the shapes were made for [" + std::to_string(s.height) + ", " +
                    std::to_string(s.width) + ", 4]");
    return overlay_format(frame.dtype() == nb::dtype<uint8_t>()                  ? "uint8"
                          : frame.dtype() == component_dtype(ComponentType::f16) ? "float16"
                                                                                 : "another dtype",
                          srgb);
}

std::span<uint8_t> bytes_of(Frame& frame) { return {static_cast<uint8_t*>(frame.data()), frame.nbytes()}; }

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

#ifdef TVLM_HAVE_CUDA
// The KNN graph of a stream of CUDA frames, and how its links are drawn.
struct CudaLinks {
    CudaKnnGraph graph;
    float width;
};
#endif

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
          nb::arg("links").none() = nb::none(), nb::arg("device_links") = false,
          "Shape records of a scene in JSON text for a width x height frame.");
    m.def("overlay_shapes_of_scene", &shapes_of_scene, nb::arg("scene"), nb::arg("width"), nb::arg("height"),
          nb::arg("links").none() = nb::none(), nb::arg("device_links") = false,
          "Shape records of a scene dict for a width x height frame, read in place (no JSON); the same "
          "schema, checks and messages as the JSON text.");
    nb::class_<BoxStyle>(m, "OverlayBoxStyle",
                         "How draw_bounding_boxes draws: stroke width, corner radius, label "
                         "size, point radius, fill opacity.")
        .def(nb::init<float, float, float, float, uint8_t>(), nb::arg("width"), nb::arg("radius"), nb::arg("font_size"),
             nb::arg("point_radius"), nb::arg("fill_alpha"));
    m.def("overlay_shapes_of_arrays", &shapes_of_arrays, nb::arg("boxes"), nb::arg("box_colors"), nb::arg("labels"),
          nb::arg("points"), nb::arg("point_colors"), nb::arg("tracks"), nb::arg("style"), nb::arg("width"),
          nb::arg("height"), nb::arg("links").none() = nb::none(), nb::arg("device_links") = false,
          "Shape records of boxes [N, 4] (xmin, ymin, xmax, ymax) with colours [N, 4] and labels, and points "
          "[M, 2] with colours and track ids, for a width x height frame; no JSON.");
    m.def("overlay_draw_cpu", &draw_cpu, nb::arg("shapes"), nb::arg("frame"), nb::arg("srgb"), Release());
    m.def("overlay_draw_vulkan", &draw_vulkan, nb::arg("device"), nb::arg("shapes"), nb::arg("frame"), nb::arg("srgb"),
          Release());
#ifdef TVLM_HAVE_CUDA
    nb::class_<CudaOverlay>(m, "CudaOverlay", "The overlay renderer's CUDA kernels and their buffers.")
        .def(
            "__init__",
            [](CudaOverlay* o, int device) {
                const DeviceGuard guard(device);  // its event belongs to the frames' device
                new (o) CudaOverlay();
            },
            nb::arg("device"))
        .def(
            "draw",
            [](CudaOverlay& o, int device, const OverlayShapes& s, uintptr_t frame, size_t pitch,
               const std::string& dtype, bool srgb, uintptr_t stream, CudaLinks* links) {
                const DeviceGuard guard(device);
                const Format format = overlay_format(dtype, srgb);
                if (!links) {
                    o.draw(s.shapes, reinterpret_cast<void*>(frame), pitch, s.width, s.height, format,
                           stream_of(stream));
                    return;
                }
                links->graph.update(s.points, stream_of(stream));
                const OverlayDeviceLinks made = links->graph.links(s.curves_end, links->width);
                o.draw(s.shapes, reinterpret_cast<void*>(frame), pitch, s.width, s.height, format, stream_of(stream),
                       &made);
            },
            nb::arg("device"), nb::arg("shapes"), nb::arg("frame"), nb::arg("pitch_bytes"), nb::arg("dtype"),
            nb::arg("srgb"), nb::arg("stream"), nb::arg("links").none() = nb::none(),
            "Draws the shapes over the frame on the stream; with `links`, first that graph's next frame of the "
            "shapes' points (made with device_links), its links drawn after the scene's curves.");
    nb::class_<CudaLinks>(m, "CudaKnnLinks", "A KNN graph over tracked points on one CUDA device, kept across frames.")
        .def(
            "__init__",
            [](CudaLinks* l, int device, uint32_t k, uint32_t hysteresis, float width) {
                const DeviceGuard guard(device);
                new (l) CudaLinks{CudaKnnGraph({.k = k, .hysteresis = hysteresis}), width};
            },
            nb::arg("device"), nb::arg("k"), nb::arg("hysteresis"), nb::arg("width"))
        .def(
            "count", [](CudaLinks& l) { return l.graph.edge_count(); }, Release(),
            "The links of the last frame (waits for it).");
#endif
}

}  // namespace tvlm::py
