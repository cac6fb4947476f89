// The image processors' work for Python: host uint8 images resized as torch resizes them
// on the CPU (engine/processors/torch_byte_resize.h); on CUDA, the target of a resize
// (cuda/processors/image_resize.h; what python/texturevlm/processors computes from a
// model's config) and the resizer that runs a whole call's images of one size, either
// filter, in a few launches (cuda_pipelines/cuda_image_resizer.h).
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "python/bindings/arrays.h"
#include "python/bindings/bindings.h"
#include "engine/error.h"
#include "engine/processors/byte_layouts.h"
#include "engine/processors/torch_byte_resize.h"
#ifdef TVLM_HAVE_CUDA
#include "python/bindings/cuda_calls.h"
#include "cuda_pipelines/cuda_image_resizer.h"
#include "cuda_pipelines/stream_branches.h"
#include "cuda/processors/image_resize.h"
#endif

namespace tvlm::py {

namespace {

using ByteImage = nb::ndarray<const uint8_t, nb::ndim<3>, nb::device::cpu>;
using ByteOut = nb::ndarray<uint8_t, nb::ndim<3>, nb::c_contig, nb::device::cpu>;

// [H, W, C] bytes (any strides) -> the window of the resized image, [h, w, C] bytes: into
// `out` where given (C-contiguous, that shape), else a new array.
nb::object resize_bytes(const ByteImage& image, uint32_t resized_width, uint32_t resized_height, uint32_t left,
                        uint32_t top, uint32_t width, uint32_t height, const std::string& filter, bool simd,
                        std::optional<ByteOut> out) {
    ByteResizeFilter f;
    if (filter == "bicubic") f = ByteResizeFilter::bicubic;
    else if (filter == "bilinear") f = ByteResizeFilter::bilinear;
    else if (filter == "lanczos") f = ByteResizeFilter::lanczos;
    else throw Error("the byte resize's filter is 'bicubic', 'bilinear' or 'lanczos', not '" + filter + "'");
    ByteImageView view;
    view.data = image.data();
    view.height = static_cast<uint32_t>(image.shape(0));
    view.width = static_cast<uint32_t>(image.shape(1));
    view.channels = static_cast<uint32_t>(image.shape(2));
    view.stride_y = image.stride(0);
    view.stride_x = image.stride(1);
    view.stride_c = image.stride(2);
    const ByteResizeCode code = simd ? ByteResizeCode::fastest : ByteResizeCode::scalar;
    if (out) {
        if (out->shape(0) != height || out->shape(1) != width || out->shape(2) != view.channels)
            throw Error("out is [" + std::to_string(out->shape(0)) + ", " + std::to_string(out->shape(1)) + ", " +
                        std::to_string(out->shape(2)) + "]; the resized window is [" + std::to_string(height) + ", " +
                        std::to_string(width) + ", " + std::to_string(view.channels) + "]");
        nb::gil_scoped_release released;  // the arrays stay alive: the caller holds them
        resize_bytes_as_torch(view, resized_width, resized_height, left, top, width, height, f, out->data(), code);
        return nb::none();
    }
    // Not zeroed: every byte is written (zeroing a large image's bytes cost more than resizing them).
    std::unique_ptr<uint8_t[]> bytes(new uint8_t[size_t(height) * width * view.channels]);
    {
        nb::gil_scoped_release released;  // the array stays alive: the caller holds it
        resize_bytes_as_torch(view, resized_width, resized_height, left, top, width, height, f, bytes.get(), code);
    }
    return nb::cast(owned_array(std::move(bytes), {height, width, view.channels}, nb::dtype<uint8_t>()));
}

using PlanarByteImages = nb::ndarray<const uint8_t, nb::ndim<4>, nb::device::cpu>;
using ByteTable = nb::ndarray<const float, nb::shape<3, 256>, nb::c_contig, nb::device::cpu>;
using FloatOut = nb::ndarray<float, nb::c_contig, nb::device::cpu>;

// [B, 3, h, w] bytes (any strides) -> `out`, each byte through table[c] into `layout`.
void lay_out_bytes(const PlanarByteImages& images, const ByteTable& table, const std::string& layout,
                   uint32_t tile_width, uint32_t tile_height, uint32_t patch, uint32_t merge, uint32_t temporal,
                   FloatOut out) {
    ByteLayoutShape shape;
    if (layout == "planar") shape.kind = ByteLayout::planar;
    else if (layout == "tiles") shape.kind = ByteLayout::tiles;
    else if (layout == "merged_patches") shape.kind = ByteLayout::merged_patches;
    else throw Error("a byte layout is 'planar', 'tiles' or 'merged_patches', not '" + layout + "'");
    shape.tile_width = tile_width, shape.tile_height = tile_height;
    shape.patch = patch, shape.merge = merge, shape.temporal = temporal;
    if (images.shape(1) != 3) throw Error("the resized images are [B, 3, h, w] bytes");
    PlanarBytes bytes;
    bytes.data = images.data();
    bytes.images = static_cast<uint32_t>(images.shape(0));
    bytes.height = static_cast<uint32_t>(images.shape(2));
    bytes.width = static_cast<uint32_t>(images.shape(3));
    bytes.stride_b = images.stride(0), bytes.stride_c = images.stride(1);
    bytes.stride_y = images.stride(2), bytes.stride_x = images.stride(3);
    float values[3][256];
    std::copy(table.data(), table.data() + 3 * 256, &values[0][0]);
    nb::gil_scoped_release released;  // the arrays stay alive: the caller holds them
    write_byte_layout(bytes, values, shape, out.data(), out.size());
}

}  // namespace

#ifdef TVLM_HAVE_CUDA
namespace {

TensorDtype output_dtype(const std::string& name) {
    if (name == "float32") return TensorDtype::f32;
    if (name == "float16") return TensorDtype::f16;
    if (name == "bfloat16") return TensorDtype::bf16;
    if (name == "uint8") return TensorDtype::u8;  // the resized image itself (check_resize_target)
    throw Error("processor outputs are float32, float16, bfloat16 or uint8, not " + name);
}

ResizeLayout layout_of(const std::string& name) {
    if (name == "planar") return ResizeLayout::planar;
    if (name == "merged_patches") return ResizeLayout::merged_patches;
    if (name == "tiles") return ResizeLayout::tiles;
    throw Error("a resize target's layout is 'planar', 'merged_patches' or 'tiles', not '" + name + "'");
}

std::array<float, 3> three(const float (&v)[3]) { return {v[0], v[1], v[2]}; }
void set_three(float (&v)[3], const std::array<float, 3>& from) {
    for (size_t c = 0; c < 3; ++c) v[c] = from[c];
}

// A run's arguments as the resizer takes them: the images (device pointers sharing dtype,
// strides and size) as a view and their pointers, and the target writing at `out`.
struct PreparedRun {
    TensorView view;
    Extent2D size;
    std::vector<const void*> pointers;
    ResizeTarget target;
};

PreparedRun prepared_run(std::span<const uintptr_t> images, const std::string& dtype,
                         const std::vector<int64_t>& strides, uint32_t channels, Extent2D size,
                         const ResizeTarget& target, uintptr_t out) {
    if (images.empty()) throw Error("a resizer run needs at least one image");
    PreparedRun p{tensor_view(images[0], dtype, strides, channels), size, std::vector<const void*>(images.size()),
                  target};
    for (size_t i = 0; i < images.size(); ++i) p.pointers[i] = reinterpret_cast<const void*>(images[i]);
    p.target.out = reinterpret_cast<void*>(out);
    return p;
}

// A resizer on its device: Python passes the images as pointers (a list of tensors or the
// images of a batch) with the strides they share.
class ResizerBinding {
public:
    ResizerBinding(int device, const std::string& filter, const std::string& dtype, uint32_t channels, uint32_t width,
                   uint32_t height, uint32_t images, uint32_t skipped_levels, uint32_t texture_levels)
        : device_(device),
          resizer_(make(device, {parse_filter(filter), tensor_dtype(dtype), channels, width, height, images,
                                 skipped_levels, texture_levels})) {}

    // `out` is passed apart from the target (a copy of which is written to) so that one
    // kept target serves every call, from any thread.
    void run(const std::vector<uintptr_t>& images, const std::string& dtype, const std::vector<int64_t>& strides,
             uint32_t width, uint32_t height, const ResizeTarget& target, uintptr_t out, uintptr_t stream,
             bool replay) const {
        const DeviceGuard guard(device_);
        const PreparedRun p = prepared_run(images, dtype, strides, resizer_.shape().channels, {width, height}, target,
                                           out);
        resizer_.run(p.view, p.size, p.pointers, p.target, stream_of(stream),
                     replay ? CudaImageResizer::Replay::repeated : CudaImageResizer::Replay::never);
    }
    bool any_size() const { return resizer_.any_size(); }
    size_t replay_graphs() const { return resizer_.replay_graphs(); }
    int device() const { return device_; }
    const CudaImageResizer& resizer() const { return resizer_; }

private:
    static ResizeFilter parse_filter(const std::string& name) {
        if (name == "texture") return ResizeFilter::texture;
        if (name == "bicubic") return ResizeFilter::bicubic;
        if (name == "bilinear") return ResizeFilter::bilinear;
        throw Error("a resizer's filter is 'texture', 'bicubic' or 'bilinear', not '" + name + "'");
    }
    static CudaImageResizer make(int device, const ResizerShape& shape) {
        const DeviceGuard guard(device);
        return CudaImageResizer(shape);
    }

    int device_;
    CudaImageResizer resizer_;
};

// A call's resizer runs at once (cuda_pipelines/stream_branches.h), kept by the call: run k
// reads the call's images [first, end) and writes at out + offset bytes. Runs of one
// resizer take one branch, in order (its texture and scratch are one set); each other
// resizer a branch of its own. Nothing launches where a run would refuse.
class ResizerBranches {
public:
    using RunArgs = std::tuple<nb::object, size_t, size_t, std::string, std::vector<int64_t>, uint32_t, uint32_t,
                               ResizeTarget, uintptr_t>;

    // `replay`: a run repeating an earlier one's arguments replays it as a graph (a
    // remembered call's); false for runs whose places in the output change from call to
    // call (composed calls: CudaImageResizer::Replay::never).
    explicit ResizerBranches(const std::vector<RunArgs>& runs, bool replay)
        : replay_(replay ? CudaImageResizer::Replay::repeated : CudaImageResizer::Replay::never) {
        if (runs.empty()) throw Error("resizer branches need at least one run");
        std::vector<const ResizerBinding*> resizers;
        for (const auto& [object, first, end, dtype, strides, width, height, target, offset] : runs) {
            const ResizerBinding* resizer = nb::cast<const ResizerBinding*>(object);
            if (!resizer) throw Error("a resizer run needs a CudaImageResizer, not None");
            if (first >= end) throw Error("a resizer run needs at least one image");
            tensor_dtype(dtype);  // refused here, not at the first call
            const auto found = std::find(resizers.begin(), resizers.end(), resizer);
            const size_t branch = size_t(found - resizers.begin());
            if (found == resizers.end()) resizers.push_back(resizer);
            runs_.push_back({object, resizer, first, end, dtype, strides, {width, height}, target, offset, branch});
        }
        device_ = resizers[0]->device();
        for (const ResizerBinding* r : resizers)
            if (r->device() != device_) throw Error("a call's resizers run on one CUDA device");
        branches_ = resizers.size();
    }

    // `images`: the call's image pointers; `out`: its output's.
    void run(const std::vector<uintptr_t>& images, uintptr_t out, uintptr_t stream) const {
        const DeviceGuard guard(device_);
        std::vector<PreparedRun> prepared;
        prepared.reserve(runs_.size());
        for (const Run& r : runs_) {
            if (r.end > images.size())
                throw Error("a resizer run reads images up to " + std::to_string(r.end) + " of a call of " +
                            std::to_string(images.size()));
            const CudaImageResizer& resizer = r.resizer->resizer();
            const PreparedRun& p = prepared.emplace_back(
                prepared_run(std::span(images).subspan(r.first, r.end - r.first), r.dtype, r.strides,
                             resizer.shape().channels, r.size, r.target, out + r.offset));
            resizer.check(p.view, p.size, p.pointers, p.target);
        }
        run_on_branches(
            branches_,
            [&](size_t branch, cudaStream_t s) {
                for (size_t k = 0; k < runs_.size(); ++k) {
                    const PreparedRun& p = prepared[k];
                    if (runs_[k].branch == branch)
                        runs_[k].resizer->resizer().launch(p.view, p.size, p.pointers, p.target, s, replay_);
                }
            },
            stream_of(stream));
    }

    size_t branches() const { return branches_; }

private:
    struct Run {
        nb::object holder;  // keeps the resizer alive
        const ResizerBinding* resizer;
        size_t first, end;
        std::string dtype;
        std::vector<int64_t> strides;
        Extent2D size;
        ResizeTarget target;
        uintptr_t offset;
        size_t branch;
    };
    CudaImageResizer::Replay replay_;
    std::vector<Run> runs_;
    size_t branches_ = 0;
    int device_ = 0;
};

void bind_cuda_resize(nb::module_& m) {
    nb::class_<ResizeTarget>(
        m, "ResizeTarget",
        "Where a processor's resized, normalized pixels go (cuda/processors/image_resize.h); the output "
        "pointer is given to each run.")
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
            "layout",
            [](const ResizeTarget& t) {
                return std::string(t.layout == ResizeLayout::merged_patches ? "merged_patches"
                                   : t.layout == ResizeLayout::tiles        ? "tiles"
                                                                            : "planar");
            },
            [](ResizeTarget& t, const std::string& name) { t.layout = layout_of(name); })
        .def_rw("tile_width", &ResizeTarget::tile_width)
        .def_rw("tile_height", &ResizeTarget::tile_height)
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
                                   : t.out_dtype == TensorDtype::u8   ? "uint8"
                                                                      : "float32");
            },
            [](ResizeTarget& t, const std::string& name) { t.out_dtype = output_dtype(name); });
    nb::class_<ResizerBinding>(m, "CudaImageResizer",
                               "A processor's GPU work for images of one size and dtype, one call per batch "
                               "(cuda_pipelines/cuda_image_resizer.h).")
        .def(nb::init<int, const std::string&, const std::string&, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                      uint32_t>(),
             nb::arg("device"), nb::arg("filter"), nb::arg("dtype"), nb::arg("channels"), nb::arg("width"),
             nb::arg("height"), nb::arg("images"), nb::arg("skipped_levels"), nb::arg("texture_levels"))
        .def("run", &ResizerBinding::run, nb::arg("images"), nb::arg("dtype"), nb::arg("strides"), nb::arg("width"),
             nb::arg("height"), nb::arg("target"), nb::arg("out"), nb::arg("stream"), nb::arg("replay") = true,
             "target.images images of width x height (device pointers sharing dtype and strides b, c, y, x) into "
             "`out` (the target's own out is not read). replay=False launches directly, never as a graph: for "
             "runs whose arguments will not repeat.")
        .def_prop_ro("any_size", &ResizerBinding::any_size,
                     "Whether it takes images of any size (made with width and height 0: bicubic and bilinear).")
        .def_prop_ro("replay_graphs", &ResizerBinding::replay_graphs,
                     "Runs kept as graphs (a run repeating another's arguments replays one).");
    nb::class_<ResizerBranches>(m, "ResizerBranches",
                                "A call's resizer runs, each resizer on a stream branch of its own "
                                "(cuda_pipelines/stream_branches.h).")
        .def(nb::init<const std::vector<ResizerBranches::RunArgs>&, bool>(), nb::arg("runs"), nb::arg("replay") = true,
             "runs: (resizer, first, end, dtype, strides, width, height, target, offset_bytes) each: the call's "
             "images [first, end) into the output at offset_bytes. replay=False: every run launches directly, "
             "never kept as a graph (runs whose places change from call to call).")
        .def("run", &ResizerBranches::run, nb::arg("images"), nb::arg("out"), nb::arg("stream"),
             "The runs on `stream` and its branches, joined back into it; nothing launches where a run refuses.")
        .def_prop_ro("branches", &ResizerBranches::branches, "Streams the runs take at once.");
}

}  // namespace
#endif

void bind_resize(nb::module_& m) {
    m.def("resize_bytes_as_torch", &resize_bytes, nb::arg("image"), nb::arg("resized_width"), nb::arg("resized_height"),
          nb::arg("left"), nb::arg("top"), nb::arg("width"), nb::arg("height"), nb::arg("filter") = "bicubic",
          nb::arg("simd") = true, nb::arg("out") = nb::none(),
          "The window (left, top, width, height) of a [H, W, C] uint8 image resized to resized_width x "
          "resized_height as torch resizes uint8 images on the CPU (antialiased, fixed point): [height, width, C] "
          "uint8 (engine/processors/torch_byte_resize.h), or None where written into `out` ([height, width, C] "
          "uint8, C-contiguous). simd=False runs the scalar passes alone (the same bytes; for tests).");
    m.def("lay_out_bytes", &lay_out_bytes, nb::arg("images"), nb::arg("table"), nb::arg("layout"),
          nb::arg("tile_width") = 0, nb::arg("tile_height") = 0, nb::arg("patch") = 0, nb::arg("merge") = 0,
          nb::arg("temporal") = 1, nb::arg("out"),
          "Resized [B, 3, h, w] uint8 images (any strides) as float32 values in `out` (C-contiguous, the layout's "
          "size), each byte of channel c as table[c][byte], laid out 'planar' ([B, 3, h, w]), 'tiles' (row-major "
          "tiles of [3, tile_height, tile_width]) or 'merged_patches' (HF's Qwen2-VL rows, `temporal` copies of each "
          "image), on the host's cores (engine/processors/byte_layouts.h).");
#ifdef TVLM_HAVE_CUDA
    bind_cuda_resize(m);
#endif
}

}  // namespace tvlm::py
