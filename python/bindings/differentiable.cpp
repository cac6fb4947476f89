// Differentiable point sampling for Python (texturevlm.sample_points): the double CPU
// reference over NumPy arrays (host tensors and the CI), and the CUDA kernels over device
// pointers on the caller's stream (cuda/differentiable/point_sampling_grad.h).
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <algorithm>
#include <bit>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "python/bindings/arrays.h"
#include "python/bindings/bindings.h"
#include "engine/differentiable/feature_chain.h"
#include "engine/differentiable/point_sampling.h"
#include "engine/error.h"
#ifdef TVLM_HAVE_CUDA
#include <map>

#include "python/bindings/cuda_calls.h"
#include "cuda/nonfinite_flag.h"
#include "cuda/differentiable/point_sampling_grad.h"
#include "cuda_pipelines/replayed_launches.h"
#endif

namespace tvlm::py {

namespace {

using Doubles = nb::ndarray<double, nb::device::cpu, nb::c_contig, nb::ro>;
using Layers = nb::ndarray<int32_t, nb::device::cpu, nb::c_contig, nb::ro>;

std::span<const double> values_of(const Doubles& a) { return {a.data(), a.size()}; }

// image [layers, channels, height, width] and the points, as the reference reads them.
struct HostJob {
    FeatureChain chain;
    std::vector<uint32_t> layer;
    std::span<const double> uv, lod;

    HostJob(const Doubles& image, uint32_t levels, const Doubles& uv_, const Doubles& lod_,
            const std::optional<Layers>& layer_) {
        if (image.ndim() != 4) throw Error("the image is [layers, channels, height, width]");
        chain = box_chain(values_of(image), uint32_t(image.shape(0)), uint32_t(image.shape(1)),
                          uint32_t(image.shape(3)), uint32_t(image.shape(2)), levels);
        uv = values_of(uv_);
        lod = values_of(lod_);
        if (layer_) {
            if (layer_->size() != lod.size()) throw Error("one layer per point");
            for (size_t i = 0; i < layer_->size(); ++i) {
                if (layer_->data()[i] < 0) throw Error("point " + std::to_string(i) + " has a negative layer");
                layer.push_back(uint32_t(layer_->data()[i]));
            }
        }
    }
    PointQuery query() const { return {uv, lod, layer}; }
};

NumpyArray reference_forward(const Doubles& image, uint32_t levels, const Doubles& uv, const Doubles& lod,
                             const std::optional<Layers>& layer) {
    const HostJob job(image, levels, uv, lod, layer);
    return owned_array(sample_points(job.chain, job.query()), {job.lod.size(), job.chain.channels},
                       nb::dtype<double>());
}

// image_grad false: the image takes no gradient, so its fold is skipped and its entry is None.
nb::tuple reference_backward(const Doubles& image, uint32_t levels, const Doubles& uv, const Doubles& lod,
                             const std::optional<Layers>& layer, const Doubles& grad_out, bool image_grad) {
    const HostJob job(image, levels, uv, lod, layer);
    PointGradients g = sample_points_backward(job.chain, job.query(), values_of(grad_out));
    const FeatureChain& c = job.chain;
    nb::object folded = nb::none();
    if (image_grad)
        folded = nb::cast(owned_array(box_chain_adjoint(job.chain, std::move(g.levels)),
                                      {c.layers, c.channels, c.height, c.width}, nb::dtype<double>()));
    return nb::make_tuple(folded, owned_array(std::move(g.uv), {job.lod.size(), 2}, nb::dtype<double>()),
                          owned_array(std::move(g.lod), {job.lod.size()}, nb::dtype<double>()));
}

// The packed chain (level 0 first, each [layers, channels, h_l, w_l]) of image [L, C, H, W].
NumpyArray reference_chain(const Doubles& image, uint32_t levels) {
    if (image.ndim() != 4) throw Error("the image is [layers, channels, height, width]");
    FeatureChain chain = box_chain(values_of(image), uint32_t(image.shape(0)), uint32_t(image.shape(1)),
                                   uint32_t(image.shape(3)), uint32_t(image.shape(2)), levels);
    std::vector<double> packed;
    for (const std::vector<double>& level : chain.levels) packed.insert(packed.end(), level.begin(), level.end());
    const size_t size = packed.size();
    return owned_array(std::move(packed), {size}, nb::dtype<double>());
}

// d loss / d image [L, C, H, W] from d loss / d each level of the packed chain.
NumpyArray reference_chain_adjoint(const Doubles& grad_chain, uint32_t layers, uint32_t channels, uint32_t width,
                                   uint32_t height, uint32_t levels) {
    if (!layers || !channels || !width || !height || !levels || levels > std::bit_width(std::max(width, height)))
        throw Error("a chain of " + std::to_string(levels) + " levels of " + std::to_string(layers) + " x " +
                    std::to_string(channels) + " x " + std::to_string(width) + "x" + std::to_string(height) +
                    " images does not exist");
    FeatureChain shape{layers, channels, width, height, {}};
    std::vector<std::vector<double>> grads;
    size_t at = 0;
    for (uint32_t l = 0; l < levels; ++l) {
        const size_t n = size_t{layers} * channels * shape.level_width(l) * shape.level_height(l);
        if (at + n > grad_chain.size()) break;
        grads.emplace_back(grad_chain.data() + at, grad_chain.data() + at + n);
        shape.levels.emplace_back(n);
        at += n;
    }
    if (grads.size() != levels || at != grad_chain.size())
        throw Error("the chain's gradient has " + std::to_string(grad_chain.size()) + " values, not the " +
                    std::to_string(levels) + " levels of a " + std::to_string(width) + "x" + std::to_string(height) +
                    " chain");
    return owned_array(box_chain_adjoint(shape, std::move(grads)), {layers, channels, height, width},
                       nb::dtype<double>());
}

#ifdef TVLM_HAVE_CUDA
// The chain's shape and value type from Python's description.
struct CudaJob {
    FeatureChainShape shape;
    bool doubles;
    CudaJob(const std::string& dtype, uint32_t layers, uint32_t channels, uint32_t width, uint32_t height,
            uint32_t levels, bool planar_level0)
        : shape{layers, channels, width, height, levels, planar_level0}, doubles(dtype == "float64") {
        if (dtype != "float32" && dtype != "float64")
            throw Error("differentiable sampling runs in float32 or float64, not " + dtype);
        check_feature_chain(shape);
    }
};

template <class T>
PointBatch<T> batch(uintptr_t uv, uintptr_t lod, uintptr_t layer, size_t count) {
    return {reinterpret_cast<const T*>(uv), reinterpret_cast<const T*>(lod), reinterpret_cast<const int32_t*>(layer),
            count};
}

template <class T>
T* ptr(uintptr_t p) {
    return reinterpret_cast<T*>(p);
}

// A backward's upstream check reports after the fact (reading device values at once
// would need a host sync): at the next backward on the device, or at check_gradients.
uint32_t* checked_backward(int device) {
    return checked_device_flag(DeviceFlag::nonfinite_gradient, device, [device] {
        return "an earlier backward of texturevlm on cuda:" + std::to_string(device) +
               " received NaN or infinite gradients (reported now: checking device values at once would need a "
               "host sync; texturevlm.check_gradients() after a step reports it there); find where the loss or its "
               "gradient overflows";
    });
}
template <class T>
ChainLevels<T> levels_of(uintptr_t level0, uintptr_t coarse) {
    return {ptr<T>(level0), ptr<T>(coarse)};
}

// Where a patch grid's points live in one buffer of 4 * points values of T: uv, lod, then
// the layers (int32, no wider than T).
template <class T>
PointBatch<T> grid_points(uintptr_t buffer, size_t count) {
    T* p = ptr<T>(buffer);
    return {p, p + 2 * count, reinterpret_cast<const int32_t*>(p + 3 * count), count};
}

// A chain's launch plan on one device: its shape and value type, checked once when Python
// makes it (and kept per shape), then every call of the chain's kernels with tensors by
// address and the caller's stream. Each user call is one call here: the forward builds the
// chain and samples, the backward scatters and folds.
class CudaChain {
public:
    CudaChain(int device, const std::string& dtype, uint32_t layers, uint32_t channels, uint32_t width, uint32_t height,
              uint32_t levels, bool planar_level0)
        : device_(device), job_(dtype, layers, channels, width, height, levels, planar_level0) {}

    // Levels 1.. into `coarse` (channels last) from level 0.
    void build(uintptr_t level0, uintptr_t coarse, uintptr_t stream) const {
        typed([&](auto t) {
            using T = decltype(t);
            build_feature_chain<T>(job_.shape, ptr<T>(level0), ptr<T>(coarse), stream_of(stream));
        });
    }
    // grad_level0 = what the coarse levels' gradient sends back to level 0 (grad_coarse is
    // changed on the way).
    void fold(uintptr_t grad_level0, uintptr_t grad_coarse, uintptr_t stream) const {
        uint32_t* nonfinite = checked_backward(device_);
        typed([&](auto t) {
            using T = decltype(t);
            fold_chain_gradient<T>(job_.shape, levels_of<T>(grad_level0, grad_coarse), stream_of(stream), nonfinite);
        });
    }
    // The chain, then its samples at the points.
    void forward(uintptr_t level0, uintptr_t coarse, uintptr_t uv, uintptr_t lod, uintptr_t layer, size_t count,
                 uintptr_t out, uintptr_t stream) const {
        typed([&](auto t) {
            using T = decltype(t);
            launch({1, level0, coarse, uv, lod, layer, count, out}, stream, [&](cudaStream_t s) {
                build_feature_chain<T>(job_.shape, ptr<T>(level0), ptr<T>(coarse), s);
                sample_points_forward<T>(job_.shape, levels_of<const T>(level0, coarse),
                                         batch<T>(uv, lod, layer, count), ptr<T>(out), s);
            });
        });
    }
    void backward(uintptr_t level0, uintptr_t coarse, uintptr_t uv, uintptr_t lod, uintptr_t layer, size_t count,
                  uintptr_t grad_out, uintptr_t grad_level0, uintptr_t grad_coarse, uintptr_t grad_uv,
                  uintptr_t grad_lod, uintptr_t stream) const {
        uint32_t* nonfinite = checked_backward(device_);
        typed([&](auto t) {
            using T = decltype(t);
            launch({2, level0, coarse, uv, lod, layer, count, grad_out, grad_level0, grad_coarse, grad_uv, grad_lod},
                   stream, [&](cudaStream_t s) {
                       sample_points_backward<T>(job_.shape, levels_of<const T>(level0, coarse),
                                                 batch<T>(uv, lod, layer, count), ptr<T>(grad_out),
                                                 levels_of<T>(grad_level0, grad_coarse), ptr<T>(grad_uv),
                                                 ptr<T>(grad_lod), s, nonfinite);
                   });
        });
    }
    // The chain, the points of a patch grid from meta [images, patches, 5] into `points`
    // (4 * count values, kept for the backward), then their samples [count, channels].
    void forward_patches(uintptr_t level0, uintptr_t coarse, uintptr_t meta, uint32_t images, uint32_t patches,
                         uint32_t patch_size, uintptr_t points, uintptr_t out, uintptr_t stream) const {
        const PatchGrid grid = checked_grid(images, patches, patch_size);
        typed([&](auto t) {
            using T = decltype(t);
            const PointBatch<T> p = grid_points<T>(points, grid.points());
            launch({3, level0, coarse, meta, images, patches, patch_size, points, out}, stream, [&](cudaStream_t s) {
                patch_grid_points<T>(ptr<const T>(meta), grid, ptr<T>(points), const_cast<T*>(p.lod),
                                     const_cast<int32_t*>(p.layer), s);
                build_feature_chain<T>(job_.shape, ptr<T>(level0), ptr<T>(coarse), s);
                sample_points_forward<T>(job_.shape, levels_of<const T>(level0, coarse), p, ptr<T>(out), s);
            });
        });
    }
    // Gradients to the chain (as backward), and, where grad_meta is not 0, to the metadata
    // rows; grad_points (3 * count values) holds the points' gradients on the way. grad_out
    // is the patches' gradient as sample_patches returns them, planar ([images * patches,
    // channels, P, P]), where grad_last is not 0 (count * channels values of scratch it is
    // first transposed into), else channels last ([count, channels]).
    void backward_patches(uintptr_t level0, uintptr_t coarse, uint32_t images, uint32_t patches, uint32_t patch_size,
                          uintptr_t points, uintptr_t grad_out, uintptr_t grad_last, uintptr_t grad_level0,
                          uintptr_t grad_coarse, uintptr_t grad_points, uintptr_t grad_meta, uintptr_t stream) const {
        const PatchGrid grid = checked_grid(images, patches, patch_size);
        uint32_t* nonfinite = checked_backward(device_);
        typed([&](auto t) {
            using T = decltype(t);
            const size_t count = grid.points();
            T* grad_uv = ptr<T>(grad_points);
            launch(
                {4, level0, coarse, images, patches, patch_size, points, grad_out, grad_last, grad_level0, grad_coarse,
                 grad_points, grad_meta},
                stream, [&](cudaStream_t s) {
                    if (grad_last)
                        patch_grad_channels_last<T>(ptr<T>(grad_out), grid, job_.shape.channels, ptr<T>(grad_last), s);
                    sample_points_backward<T>(job_.shape, levels_of<const T>(level0, coarse),
                                              grid_points<T>(points, count), ptr<T>(grad_last ? grad_last : grad_out),
                                              levels_of<T>(grad_level0, grad_coarse), grad_uv, grad_uv + 2 * count, s,
                                              nonfinite);
                    if (grad_meta) patch_grid_adjoint<T>(grad_uv, grad_uv + 2 * count, grid, ptr<T>(grad_meta), s);
                });
        });
    }

    // Graphs kept for repeated calls (tests).
    size_t replay_graphs() const { return replayed_.graphs(); }

private:
    // The launches of one call on the caller's stream: replayed as one graph from a call's
    // second repeat on (the engine's calls are a few launches of microseconds each).
    template <class F>
    void launch(std::initializer_list<uint64_t> key, uintptr_t stream, F&& launches) const {
        replayed_.run(ReplayedLaunches::Key(key), stream_of(stream), launches);
    }
    // f(T{}) with T the chain's value type, on the plan's device.
    template <class F>
    void typed(F&& f) const {
        const DeviceGuard guard(device_);
        if (job_.doubles) f(double{});
        else f(float{});
    }
    // The patch grid of metadata rows for `images` images, which must be the batch's.
    PatchGrid checked_grid(uint32_t images, uint32_t patches, uint32_t patch_size) const {
        if (images != job_.shape.layers)
            throw Error("the metadata holds rows for " + std::to_string(images) + " images and the batch has " +
                        std::to_string(job_.shape.layers));
        return {images, patches, patch_size};
    }

    int device_;
    CudaJob job_;
    mutable ReplayedLaunches replayed_;
};
#endif

}  // namespace

void bind_differentiable(nb::module_& m) {
    m.def("reference_sample_points", &reference_forward, nb::arg("image"), nb::arg("levels"), nb::arg("uv"),
          nb::arg("lod"), nb::arg("layer").none(),
          "Trilinear samples [N, C] of the box chain of image [L, C, H, W] (float64) at uv [N, 2], lod [N] "
          "(engine/differentiable/point_sampling.h).");
    m.def("reference_sample_points_backward", &reference_backward, nb::arg("image"), nb::arg("levels"), nb::arg("uv"),
          nb::arg("lod"), nb::arg("layer").none(), nb::arg("grad_out"), nb::arg("image_grad") = true,
          "(d loss / d image, d loss / d uv, d loss / d lod) for d loss / d samples = grad_out [N, C]; "
          "image_grad=False: None for the image, its fold skipped.");
    m.def("reference_box_chain", &reference_chain, nb::arg("image"), nb::arg("levels"),
          "The box chain of image [L, C, H, W] (float64) packed level 0 first "
          "(engine/differentiable/feature_chain.h).");
    m.def("reference_box_chain_adjoint", &reference_chain_adjoint, nb::arg("grad_chain"), nb::arg("layers"),
          nb::arg("channels"), nb::arg("width"), nb::arg("height"), nb::arg("levels"),
          "d loss / d image [L, C, H, W] from d loss / d every level of the packed chain (the box's adjoint).");
#ifdef TVLM_HAVE_CUDA
    nb::class_<CudaChain>(m, "CudaChain",
                          "A box chain's launch plan on one CUDA device (cuda/differentiable/point_sampling_grad.h): "
                          "its shape and dtype checked once; tensors by address, the caller's stream.")
        .def(nb::init<int, const std::string&, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, bool>(),
             nb::arg("device"), nb::arg("dtype"), nb::arg("layers"), nb::arg("channels"), nb::arg("width"),
             nb::arg("height"), nb::arg("levels"), nb::arg("planar_level0"),
             "Throws Error for a dtype other than float32 or float64 or a chain the kernels cannot serve.")
        .def("build", &CudaChain::build, nb::arg("level0"), nb::arg("coarse"), nb::arg("stream"),
             "Levels 1.. into `coarse` (channels last) from level 0 (planar or channels last).")
        .def("fold", &CudaChain::fold, nb::arg("grad_level0"), nb::arg("grad_coarse"), nb::arg("stream"),
             "Writes grad_level0 = what a chain gradient's coarse levels send back to level 0 (the box chain's "
             "adjoint; the coarse levels are changed on the way).")
        .def("forward", &CudaChain::forward, nb::arg("level0"), nb::arg("coarse"), nb::arg("uv"), nb::arg("lod"),
             nb::arg("layer"), nb::arg("count"), nb::arg("out"), nb::arg("stream"),
             "Builds the chain's levels 1.. into `coarse` from level 0, then samples [count, channels] of it: a "
             "forward in one call.")
        .def("forward_patches", &CudaChain::forward_patches, nb::arg("level0"), nb::arg("coarse"), nb::arg("meta"),
             nb::arg("images"), nb::arg("patches"), nb::arg("patch_size"), nb::arg("points"), nb::arg("out"),
             nb::arg("stream"),
             "The chain, the points of the patches of metadata [images, patches, 5] (into `points`, 4 values a "
             "point, kept for the backward), and their samples [images * patches * P * P, channels].")
        .def("backward_patches", &CudaChain::backward_patches, nb::arg("level0"), nb::arg("coarse"), nb::arg("images"),
             nb::arg("patches"), nb::arg("patch_size"), nb::arg("points"), nb::arg("grad_out"), nb::arg("grad_last"),
             nb::arg("grad_level0"), nb::arg("grad_coarse"), nb::arg("grad_points"), nb::arg("grad_meta"),
             nb::arg("stream"),
             "forward_patches's backward: gradients to the image (grad_level0; 0: none) and, where grad_meta is not "
             "0, to the metadata [images, patches, 5]; grad_points (3 values a point) is scratch. grad_out is planar "
             "[images * patches, channels, P, P] where grad_last (count * channels values of scratch) is not 0, else "
             "channels last [count, channels].")
        .def_prop_ro(
            "replay_graphs", [](const CudaChain& c) { return c.replay_graphs(); },
            "CUDA graphs kept for repeated calls: a call's launches replay as one from its second repeat on.")
        .def("backward", &CudaChain::backward, nb::arg("level0"), nb::arg("coarse"), nb::arg("uv"), nb::arg("lod"),
             nb::arg("layer"), nb::arg("count"), nb::arg("grad_out"), nb::arg("grad_level0"), nb::arg("grad_coarse"),
             nb::arg("grad_uv"), nb::arg("grad_lod"), nb::arg("stream"),
             "Gradients to the chain (folded into grad_level0, the image's gradient, channels last), uv and lod "
             "(grad_level0 and grad_coarse 0: the texture takes no gradient, and the backward skips its texel "
             "atomics and fold).");
    m.def(
        "cuda_take_nonfinite", [](int device) { return device_flag(DeviceFlag::nonfinite_gradient, device).take(); },
        nb::arg("device"),
        "Whether a finished backward on the device received NaN or infinite gradients since the last take "
        "(lowers the flag; sync the device first for a complete verdict).");
#endif
}

}  // namespace tvlm::py
