// Gaussian fields for Python (texturevlm.fields): the double CPU reference over NumPy arrays
// (host tensors and the CI), and the fused CUDA kernels over device pointers on the caller's
// stream (cuda/fields/gaussian_field_kernels.h).
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <span>
#include <string>
#include <vector>

#include "python/bindings/arrays.h"
#include "python/bindings/bindings.h"
#include "engine/error.h"
#include "engine/fields/gaussian_field.h"
#ifdef TVLM_HAVE_CUDA
#include "python/bindings/cuda_calls.h"
#include "cuda/fields/gaussian_field_kernels.h"
#include "cuda/nonfinite_flag.h"
#include "cuda_pipelines/replayed_launches.h"
#endif

namespace tvlm::py {

namespace {

using Doubles = nb::ndarray<double, nb::device::cpu, nb::c_contig, nb::ro>;

// The field of means [N, D], cholesky [N, D(D+1)/2], weights [N], checked for shape.
GaussianFieldView<double> view_of(const Doubles& means, const Doubles& cholesky, const Doubles& weights) {
    if (means.ndim() != 2 || (means.shape(1) != 2 && means.shape(1) != 3))
        throw Error("means are [N, D] with D = 2 or 3");
    const size_t n = means.shape(0), d = means.shape(1), tri = d * (d + 1) / 2;
    if (cholesky.ndim() != 2 || cholesky.shape(0) != n || cholesky.shape(1) != tri)
        throw Error("cholesky is [N, " + std::to_string(tri) + "] (the lower triangle of L, row by row) for " +
                    std::to_string(n) + " Gaussians in " + std::to_string(d) + "D");
    if (weights.ndim() != 1 || weights.shape(0) != n) throw Error("weights are [N] = [" + std::to_string(n) + "]");
    return {int(d), n, means.data(), cholesky.data(), weights.data()};
}

std::span<const double> points_of(const Doubles& points, int dims) {
    if (points.ndim() != 2 || points.shape(1) != size_t(dims))
        throw Error("points are [B, " + std::to_string(dims) + "] for a " + std::to_string(dims) + "D field");
    return {points.data(), points.size()};
}

nb::tuple reference_forward(const Doubles& points, const Doubles& means, const Doubles& cholesky,
                            const Doubles& weights, bool distances) {
    const GaussianFieldView<double> f = view_of(means, cholesky, weights);
    const std::span<const double> p = points_of(points, f.dims);
    std::vector<double> squared;
    std::vector<double> values = field_forward_reference(f, p, distances ? &squared : nullptr);
    const size_t b = values.size();
    nb::object d = distances ? nb::cast(owned_array(std::move(squared), {b, f.count}, nb::dtype<double>()))
                             : nb::none();
    return nb::make_tuple(owned_array(std::move(values), {b}, nb::dtype<double>()), d);
}

nb::tuple reference_backward(const Doubles& points, const Doubles& means, const Doubles& cholesky,
                             const Doubles& weights, const Doubles& grad_values) {
    const GaussianFieldView<double> f = view_of(means, cholesky, weights);
    FieldGradients g = field_backward_reference(f, points_of(points, f.dims), {grad_values.data(), grad_values.size()});
    const size_t d = size_t(f.dims), b = points.shape(0);
    return nb::make_tuple(owned_array(std::move(g.points), {b, d}, nb::dtype<double>()),
                          owned_array(std::move(g.means), {f.count, d}, nb::dtype<double>()),
                          owned_array(std::move(g.cholesky), {f.count, d * (d + 1) / 2}, nb::dtype<double>()),
                          owned_array(std::move(g.weights), {f.count}, nb::dtype<double>()));
}

#ifdef TVLM_HAVE_CUDA
// The forward checks L's diagonal on the device and raises this flag (reading the values
// back would need a host sync): the call after it on the device reports it, as does
// texturevlm.check_gradients().
uint32_t* checked_field_flag(int device) {
    return checked_device_flag(DeviceFlag::refused_field, device, [device] {
        return "an earlier Gaussian field on cuda:" + std::to_string(device) +
               " had a diagonal entry of L that is not positive and finite, and its values are NaN (reported now: "
               "checking device values at once would need a host sync); parametrise L so its diagonal stays "
               "positive (fields.cholesky_from_log_diagonal)";
    });
}

template <class T>
FieldArgs<T> args_of(int device, int dims, size_t b, size_t n, uintptr_t points, uintptr_t means, uintptr_t cholesky,
                     uintptr_t weights) {
    return {dims,
            b,
            reinterpret_cast<const T*>(points),
            n,
            reinterpret_cast<const T*>(means),
            reinterpret_cast<const T*>(cholesky),
            reinterpret_cast<const T*>(weights),
            checked_field_flag(device)};
}
// A field's launch plan on one device: dtype, dimensions and sizes checked once when Python
// makes it (and kept per shape), then the fused kernels with tensors by address.
class CudaField {
public:
    CudaField(int device, const std::string& dtype, int dims, size_t points, size_t gaussians)
        : device_(device), doubles_(dtype == "float64"), dims_(dims), b_(points), n_(gaussians) {
        if (dtype != "float32" && dtype != "float64")
            throw Error("Gaussian fields run in float32 or float64, not " + dtype);
        if (dims != 2 && dims != 3) throw Error("Gaussian fields are 2-D or 3-D, not " + std::to_string(dims) + "-D");
    }
    void forward(uintptr_t points, uintptr_t means, uintptr_t cholesky, uintptr_t weights, uintptr_t values,
                 uintptr_t distances, uintptr_t stream) const {
        const DeviceGuard guard(device_);
        if (doubles_) run_forward<double>(points, means, cholesky, weights, values, distances, stream);
        else run_forward<float>(points, means, cholesky, weights, values, distances, stream);
    }
    void backward(uintptr_t points, uintptr_t means, uintptr_t cholesky, uintptr_t weights, uintptr_t grad,
                  uintptr_t g_points, uintptr_t g_means, uintptr_t g_cholesky, uintptr_t g_weights,
                  uintptr_t stream) const {
        const DeviceGuard guard(device_);
        if (doubles_)
            run_backward<double>(points, means, cholesky, weights, grad, g_points, g_means, g_cholesky, g_weights,
                                 stream);
        else
            run_backward<float>(points, means, cholesky, weights, grad, g_points, g_means, g_cholesky, g_weights,
                                stream);
    }

    size_t replay_graphs() const { return replayed_.graphs(); }

private:
    // Each call's launches replay as one graph from a call's second repeat on
    // (cuda_pipelines/replayed_launches.h): a small field's kernels take microseconds.
    template <class T>
    void run_forward(uintptr_t points, uintptr_t means, uintptr_t cholesky, uintptr_t weights, uintptr_t values,
                     uintptr_t distances, uintptr_t stream) const {
        const auto args = args_of<T>(device_, dims_, b_, n_, points, means, cholesky, weights);
        replayed_.run(ReplayedLaunches::Key{1, points, means, cholesky, weights, values, distances}, stream_of(stream),
                      [&](cudaStream_t s) {
                          gaussian_field_forward(args, reinterpret_cast<T*>(values), reinterpret_cast<T*>(distances),
                                                 s);
                      });
    }
    template <class T>
    void run_backward(uintptr_t points, uintptr_t means, uintptr_t cholesky, uintptr_t weights, uintptr_t grad,
                      uintptr_t g_points, uintptr_t g_means, uintptr_t g_cholesky, uintptr_t g_weights,
                      uintptr_t stream) const {
        const auto args = args_of<T>(device_, dims_, b_, n_, points, means, cholesky, weights);
        replayed_.run(
            ReplayedLaunches::Key{2, points, means, cholesky, weights, grad, g_points, g_means, g_cholesky, g_weights},
            stream_of(stream), [&](cudaStream_t s) {
                gaussian_field_backward(args, reinterpret_cast<const T*>(grad),
                                        {reinterpret_cast<T*>(g_points), reinterpret_cast<T*>(g_means),
                                         reinterpret_cast<T*>(g_cholesky), reinterpret_cast<T*>(g_weights)},
                                        s);
            });
    }
    int device_;
    bool doubles_;
    int dims_;
    size_t b_, n_;
    mutable ReplayedLaunches replayed_;
};


#endif

}  // namespace

void bind_fields(nb::module_& m) {
    m.def(
        "fixations_from_saliency",
        [](nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu> grid, uint32_t k, double separation) {
            const std::vector<Fixation> points = fixations_from_saliency(
                {uint32_t(grid.shape(1)), uint32_t(grid.shape(0)), {grid.data(), grid.size()}}, k, separation);
            std::vector<std::pair<double, double>> out;
            for (const Fixation& f : points) out.emplace_back(f.x, f.y);
            return out;
        },
        nb::arg("grid"), nb::arg("k"), nb::arg("separation"),
        "The k strongest positive local maxima of a saliency grid [H, W], at least `separation` apart "
        "(engine/fields/gaussian_field.h).");
    m.def("reference_gaussian_field", &reference_forward, nb::arg("points"), nb::arg("means"), nb::arg("cholesky"),
          nb::arg("weights"), nb::arg("distances"),
          "(values [B], squared distances [B, N] or None) of a Gaussian field, in double (engine/fields).");
    m.def("reference_gaussian_field_backward", &reference_backward, nb::arg("points"), nb::arg("means"),
          nb::arg("cholesky"), nb::arg("weights"), nb::arg("grad_values"),
          "d loss / d (points, means, cholesky, weights) for d loss / d values = grad_values [B].");
#ifdef TVLM_HAVE_CUDA
    nb::class_<CudaField>(m, "CudaField",
                          "A Gaussian field's launch plan on one CUDA device (cuda/fields/gaussian_field_kernels.h): "
                          "dtype, dimensions and sizes checked once; tensors by address, the caller's stream.")
        .def(nb::init<int, const std::string&, int, size_t, size_t>(), nb::arg("device"), nb::arg("dtype"),
             nb::arg("dims"), nb::arg("points"), nb::arg("gaussians"),
             "Throws Error for a dtype other than float32 or float64, or dims other than 2 or 3.")
        .def("forward", &CudaField::forward, nb::arg("points"), nb::arg("means"), nb::arg("cholesky"),
             nb::arg("weights"), nb::arg("values"), nb::arg("distances"), nb::arg("stream"),
             "The fused forward; distances 0: not written.")
        .def("backward", &CudaField::backward, nb::arg("points"), nb::arg("means"), nb::arg("cholesky"),
             nb::arg("weights"), nb::arg("grad"), nb::arg("g_points"), nb::arg("g_means"), nb::arg("g_cholesky"),
             nb::arg("g_weights"), nb::arg("stream"),
             "The fused backward: gradients to points, means, cholesky and weights (written, not added).")
        .def_prop_ro(
            "replay_graphs", [](const CudaField& f) { return f.replay_graphs(); },
            "CUDA graphs kept for repeated calls: a call's launches replay as one from its second repeat on.");
    m.def(
        "cuda_take_refused_field", [](int device) { return device_flag(DeviceFlag::refused_field, device).take(); },
        nb::arg("device"),
        "Whether a finished Gaussian field forward on the device met a diagonal entry of L that is not positive "
        "and finite since the last take (lowers the flag; sync the device first for a complete verdict).");
#endif
}

}  // namespace tvlm::py
