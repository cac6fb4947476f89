#pragma once
// Learnable fields of anisotropic Gaussians (issue 20): f(x) = sum_n w_n exp(-|v|^2 / 2),
// L_n v = x - mu_n. The CPU reference in double (the oracle of the tests; the CUDA kernels
// are cuda/gaussian_field.h), and the checks every backend makes of its inputs.
#include <cstddef>
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
