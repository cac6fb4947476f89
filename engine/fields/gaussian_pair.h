#pragma once
// One point against one anisotropic Gaussian of a field f(x) = sum_n w_n exp(-|v_n|^2 / 2),
// L_n v_n = x - mu_n (L_n the lower-triangular Cholesky factor of the covariance): the
// arithmetic of a pair, forward and backward, written once for the CUDA kernels
// (cuda/fields/gaussian_field.cu, float and double) and the CPU reference (double). D is 2 (the
// image plane) or 3; L is packed row by row: L00, L10, L11, L20, L21, L22.
#if defined(__CUDACC__)
#define TVLM_FIELD_FN __host__ __device__ inline
#else
#define TVLM_FIELD_FN inline
#endif

namespace tvlm::fields {

template <int D>
inline constexpr int kTriangle = D*(D + 1) / 2;

// Where L(i, j), j <= i, sits in the packed triangle.
TVLM_FIELD_FN constexpr int tri(int i, int j) { return i * (i + 1) / 2 + j; }

// v = L^-1 (x - mu) by forward substitution; returns q = |v|^2.
template <int D, class T>
TVLM_FIELD_FN T mahalanobis(const T* x, const T* mu, const T* L, T* v) {
    T q = 0;
    for (int i = 0; i < D; ++i) {
        T s = x[i] - mu[i];
        for (int j = 0; j < i; ++j) s -= L[tri(i, j)] * v[j];
        v[i] = s / L[tri(i, i)];
        q += v[i] * v[i];
    }
    return q;
}

// The same with the reciprocals of L's diagonal given (inv[i] = 1 / L(i, i)): multiplies
// where mahalanobis() divides, for the kernels, which compute the reciprocals once per
// Gaussian and tile instead of once per pair. Differs from it by rounding only.
template <int D, class T>
TVLM_FIELD_FN T mahalanobis_rcp(const T* x, const T* mu, const T* L, const T* inv, T* v) {
    T q = 0;
    for (int i = 0; i < D; ++i) {
        T s = x[i] - mu[i];
        for (int j = 0; j < i; ++j) s -= L[tri(i, j)] * v[j];
        v[i] = s * inv[i];
        q += v[i] * v[i];
    }
    return q;
}

// The forward's form for kernels that stage each Gaussian once and use it for many points:
// `lower` holds L's entries below the diagonal row by row (L10; L20, L21) divided by a
// scale s, `inv` the reciprocals of the diagonal times s. The recurrence is then that of
// mahalanobis_rcp for s v, and the result is s^2 |v|^2: a kernel folds a constant of the
// exponential into s^2 (0.5 log2(e) for exp2) instead of spending multiplies per pair.
template <int D, class T>
TVLM_FIELD_FN T mahalanobis_scaled(const T* x, const T* mu, const T* lower, const T* inv) {
    T v[3];  // D <= 3
    T q = 0;
    for (int i = 0; i < D; ++i) {
        T s = x[i] - mu[i];
        for (int j = 0; j < i; ++j) s -= lower[i * (i - 1) / 2 + j] * v[j];
        v[i] = s * inv[i];
        q += v[i] * v[i];
    }
    return q;
}

// The backward of one pair's term t = w exp(-q/2), e = exp(-q/2), for d loss / d t = g:
// d loss / d v = -g w e v; u = L^-T (that) by back substitution is d loss / d x (and
// minus d loss / d mu); d loss / d L = -u v^T on the lower triangle (v = L^-1 (x - mu),
// so dv = -L^-1 dL v). Adds u to dx and -u v^T to dL; returns d loss / d w = g e.
// `inv`, where given, holds the reciprocals of L's diagonal (as in mahalanobis_rcp).
template <int D, class T>
TVLM_FIELD_FN T pair_backward(T g, T w, T e, const T* L, const T* v, T* dx, T* dL, const T* inv = nullptr) {
    T u[3];  // D <= 3
    for (int i = D - 1; i >= 0; --i) {
        T s = -g * w * e * v[i];
        for (int k = i + 1; k < D; ++k) s -= L[tri(k, i)] * u[k];
        u[i] = inv ? s * inv[i] : s / L[tri(i, i)];
    }
    for (int i = 0; i < D; ++i) {
        dx[i] += u[i];
        for (int j = 0; j <= i; ++j) dL[tri(i, j)] -= u[i] * v[j];
    }
    return g * e;
}

}  // namespace tvlm::fields
