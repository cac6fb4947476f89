#pragma once
// Learnable fields of anisotropic Gaussians (issue 20): f(x) = sum_n w_n exp(-|v|^2 / 2),
// L_n v = x - mu_n. The CPU reference in double (the oracle of the tests; the CUDA kernels
// are cuda/fields/gaussian_field_kernels.h), and the checks every backend makes of its inputs.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tvlm {

// A field's parameters, all row-major: means [N, D], Cholesky factors [N, D(D+1)/2] packed
// row by row (gaussian_pair.h), weights [N]. D is 2 or 3.
template <class T>
struct GaussianFieldView {
    int dims = 3;
    size_t count = 0;  // N
    const T* means = nullptr;
    const T* cholesky = nullptr;
    const T* weights = nullptr;
};

// Throws Error, saying which and where, for D outside {2, 3}, N = 0, B = 0, a diagonal
// entry of L that is not positive and finite, or a NaN or infinite parameter or point.
template <class T>
void check_field(const GaussianFieldView<T>& field, std::span<const T> points);

// Values [B] at points [B, D]; with `squared_distances`, also |v|^2 for every pair [B, N].
std::vector<double> field_forward_reference(const GaussianFieldView<double>& field, std::span<const double> points,
                                            std::vector<double>* squared_distances = nullptr);

struct FieldGradients {
    std::vector<double> points, means, cholesky, weights;  // shaped as their inputs
};
// d loss / d (points, means, L, weights) for d loss / d values = `grad_values` [B].
FieldGradients field_backward_reference(const GaussianFieldView<double>& field, std::span<const double> points,
                                        std::span<const double> grad_values);

}  // namespace tvlm

#include "engine/sampling/patch_layouts.h"
#include "engine/video/fixation_schedule.h"

namespace tvlm {

// A 2D field over the image plane as a saliency map (issue 20): the field evaluated at the
// centres of a grid_width x grid_height grid over [0,1]^2 (points in normalized image
// coordinates, the field's units), then its `k` strongest, well-separated positive local
// maxima (cells no neighbour exceeds) (strongest_points: at least `separation` apart, in units of the
// grid's longer side) as fixations for the foveated layouts. Throws Error for a field that
// is not 2D, k of 0, an empty grid or what check_field() refuses.
std::vector<Fixation> fixations_from_field(const GaussianFieldView<double>& field, uint32_t k, double separation = 0.15,
                                           uint32_t grid_width = 64, uint32_t grid_height = 64);
// The rule that takes: the k strongest positive local maxima of a saliency grid, at least
// `separation` apart (strongest_points). Python's fixations_from_field evaluates its field
// on the GPU and calls this. Throws Error for k of 0 or a grid of the wrong size.
std::vector<Fixation> fixations_from_saliency(const SaliencyMap& map, uint32_t k, double separation);

}  // namespace tvlm
