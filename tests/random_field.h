#pragma once
// Seeded random Gaussian fields for the tests: random rotations, scales spanning a factor
// of 100 (covariance condition numbers up to 1e4), their Cholesky factors, and the
// covariances themselves for independent checks.
#include <cmath>
#include <random>
#include <vector>

#include "engine/fields/gaussian_field.h"

namespace tvlm {

struct Field {
    int dims;
    std::vector<double> means, cholesky, weights, covariances;  // covariances [N, D, D] for the check
    GaussianFieldView<double> view() const {
        return {dims, weights.size(), means.data(), cholesky.data(), weights.data()};
    }
};

// Sigma = R diag(s^2) R^T with a random rotation and scales spanning a factor of 100
// (condition number 1e4); L its Cholesky factor.
inline Field random_field(int dims, size_t count, std::mt19937& random) {
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    Field f{dims, {}, {}, {}, {}};
    for (size_t n = 0; n < count; ++n) {
        double r[3][3] = {};
        // Gram-Schmidt on random vectors: a random orthonormal basis.
        for (int i = 0; i < dims; ++i) {
            for (int k = 0; k < dims; ++k) r[i][k] = unit(random);
            for (int j = 0; j < i; ++j) {
                double dot = 0;
                for (int k = 0; k < dims; ++k) dot += r[i][k] * r[j][k];
                for (int k = 0; k < dims; ++k) r[i][k] -= dot * r[j][k];
            }
            double norm = 0;
            for (int k = 0; k < dims; ++k) norm += r[i][k] * r[i][k];
            for (int k = 0; k < dims; ++k) r[i][k] /= std::sqrt(norm);
        }
        double s[3] = {0.3, 0.3 * (n % 2 ? 0.01 : 0.2), 0.05};
        double sigma[3][3] = {};
        for (int i = 0; i < dims; ++i)
            for (int j = 0; j < dims; ++j)
                for (int k = 0; k < dims; ++k) sigma[i][j] += r[k][i] * s[k] * s[k] * r[k][j];
        double L[3][3] = {};
        for (int i = 0; i < dims; ++i)
            for (int j = 0; j <= i; ++j) {
                double sum = sigma[i][j];
                for (int k = 0; k < j; ++k) sum -= L[i][k] * L[j][k];
                L[i][j] = i == j ? std::sqrt(sum) : sum / L[j][j];
            }
        for (int i = 0; i < dims; ++i) {
            f.means.push_back(unit(random) * 0.5);
            for (int j = 0; j <= i; ++j) f.cholesky.push_back(L[i][j]);
            for (int j = 0; j < dims; ++j) f.covariances.push_back(sigma[i][j]);
        }
        f.weights.push_back(unit(random) + 1.5);
    }
    return f;
}

}  // namespace tvlm
