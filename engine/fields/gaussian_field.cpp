#include "engine/fields/gaussian_field.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.h"
#include "engine/fields/gaussian_pair.h"
#include "engine/video/fixation_schedule.h"

namespace tvlm {

template <class T>
void check_field(const GaussianFieldView<T>& f, std::span<const T> points) {
    if (f.dims != 2 && f.dims != 3) throw Error("Gaussian fields are 2D or 3D, not " + std::to_string(f.dims) + "D");
    if (f.count == 0) throw Error("a Gaussian field needs at least one Gaussian (N = 0)");
    if (points.empty() || points.size() % size_t(f.dims))
        throw Error(std::to_string(points.size()) + " point coordinates: give B >= 1 points of " +
                    std::to_string(f.dims) + " coordinates each");
    const size_t tri = size_t(f.dims) * size_t(f.dims + 1) / 2;
    for (size_t n = 0; n < f.count; ++n) {
        for (int i = 0; i < f.dims; ++i) {
            const T diagonal = f.cholesky[n * tri + size_t(fields::tri(i, i))];
            if (!(diagonal > 0) || !std::isfinite(double(diagonal)))
                throw Error("Gaussian " + std::to_string(n) + ": diagonal entry " + std::to_string(i) + " of L is " +
                            std::to_string(double(diagonal)) +
                            "; it must be positive and finite (parametrise it as "
                            "exp(log) + eps)");
        }
        for (size_t k = 0; k < tri; ++k)
            if (!std::isfinite(double(f.cholesky[n * tri + k])))
                throw Error("Gaussian " + std::to_string(n) + ": L has a NaN or infinite entry");
        for (int i = 0; i < f.dims; ++i)
            if (!std::isfinite(double(f.means[n * size_t(f.dims) + size_t(i)])))
                throw Error("Gaussian " + std::to_string(n) + ": its mean is NaN or infinite");
        if (!std::isfinite(double(f.weights[n])))
            throw Error("Gaussian " + std::to_string(n) + ": its weight is NaN or infinite");
    }
    for (size_t i = 0; i < points.size(); ++i)
        if (!std::isfinite(double(points[i])))
            throw Error("point " + std::to_string(i / size_t(f.dims)) + " has a NaN or infinite coordinate");
}
template void check_field(const GaussianFieldView<float>&, std::span<const float>);
template void check_field(const GaussianFieldView<double>&, std::span<const double>);

namespace {

template <int D>
std::vector<double> forward(const GaussianFieldView<double>& f, std::span<const double> points,
                            std::vector<double>* squared) {
    constexpr int kTri = fields::kTriangle<D>;
    const size_t b_count = points.size() / D;
    std::vector<double> values(b_count, 0.0);
    if (squared) squared->assign(b_count * f.count, 0.0);
    for (size_t b = 0; b < b_count; ++b)
        for (size_t n = 0; n < f.count; ++n) {
            double v[3];
            const double q = fields::mahalanobis<D>(&points[b * D], f.means + n * D, f.cholesky + n * kTri, v);
            values[b] += f.weights[n] * std::exp(-0.5 * q);
            if (squared) (*squared)[b * f.count + n] = q;
        }
    return values;
}

template <int D>
FieldGradients backward(const GaussianFieldView<double>& f, std::span<const double> points,
                        std::span<const double> grad) {
    constexpr int kTri = fields::kTriangle<D>;
    const size_t b_count = points.size() / D;
    FieldGradients out{std::vector<double>(points.size()), std::vector<double>(f.count * D),
                       std::vector<double>(f.count * kTri), std::vector<double>(f.count)};
    for (size_t b = 0; b < b_count; ++b)
        for (size_t n = 0; n < f.count; ++n) {
            double v[3], dx[3] = {};
            const double* L = f.cholesky + n * kTri;
            const double q = fields::mahalanobis<D>(&points[b * D], f.means + n * D, L, v);
            out.weights[n] += fields::pair_backward<D>(grad[b], f.weights[n], std::exp(-0.5 * q), L, v, dx,
                                                       &out.cholesky[n * kTri]);
            for (int i = 0; i < D; ++i) {
                out.points[b * D + size_t(i)] += dx[i];
                out.means[n * D + size_t(i)] -= dx[i];
            }
        }
    return out;
}

}  // namespace

std::vector<double> field_forward_reference(const GaussianFieldView<double>& field, std::span<const double> points,
                                            std::vector<double>* squared_distances) {
    check_field(field, points);
    return field.dims == 2 ? forward<2>(field, points, squared_distances)
                           : forward<3>(field, points, squared_distances);
}

FieldGradients field_backward_reference(const GaussianFieldView<double>& field, std::span<const double> points,
                                        std::span<const double> grad_values) {
    check_field(field, points);
    if (grad_values.size() != points.size() / size_t(field.dims))
        throw Error(std::to_string(grad_values.size()) + " upstream gradients for " +
                    std::to_string(points.size() / size_t(field.dims)) + " points");
    return field.dims == 2 ? backward<2>(field, points, grad_values) : backward<3>(field, points, grad_values);
}

}  // namespace tvlm

namespace tvlm {

std::vector<Fixation> fixations_from_field(const GaussianFieldView<double>& field, uint32_t k, double separation,
                                           uint32_t grid_width, uint32_t grid_height) {
    if (field.dims != 2)
        throw Error("fixations come from a 2D field over the image, not a " + std::to_string(field.dims) + "D one");
    if (grid_width == 0 || grid_height == 0) throw Error("the saliency grid needs at least one cell a side");
    std::vector<double> points;
    points.reserve(size_t{grid_width} * grid_height * 2);
    for (uint32_t y = 0; y < grid_height; ++y)
        for (uint32_t x = 0; x < grid_width; ++x) {
            points.push_back((x + 0.5) / grid_width);
            points.push_back((y + 0.5) / grid_height);
        }
    const std::vector<double> values = field_forward_reference(field, points);
    std::vector<float> saliency(values.begin(), values.end());
    return fixations_from_saliency({grid_width, grid_height, saliency}, k, separation);
}

std::vector<Fixation> fixations_from_saliency(const SaliencyMap& map, uint32_t k, double separation) {
    if (k == 0) throw Error("ask for at least one fixation (k = 0)");
    if (map.width == 0 || map.height == 0 || map.values.size() != size_t{map.width} * map.height)
        throw Error("a saliency grid of " + std::to_string(map.width) + "x" + std::to_string(map.height) + " needs " +
                    std::to_string(size_t{map.width} * map.height) + " values, not " +
                    std::to_string(map.values.size()));
    // Only positive local maxima (no neighbour larger) may become fixations: a peak's flank never does.
    std::vector<float> peaks(map.values.size(), 0.0f);
    for (uint32_t y = 0; y < map.height; ++y)
        for (uint32_t x = 0; x < map.width; ++x) {
            const float v = map.values[size_t{y} * map.width + x];
            bool peak = v > 0;
            for (uint32_t ny = y ? y - 1 : 0; peak && ny <= std::min(map.height - 1, y + 1); ++ny)
                for (uint32_t nx = x ? x - 1 : 0; peak && nx <= std::min(map.width - 1, x + 1); ++nx)
                    peak = map.values[size_t{ny} * map.width + nx] <= v;
            if (peak) peaks[size_t{y} * map.width + x] = v;
        }
    return strongest_points({map.width, map.height, peaks}, k, separation);
}

}  // namespace tvlm
