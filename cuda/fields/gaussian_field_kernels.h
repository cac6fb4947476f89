#pragma once
// Fused CUDA kernels of a Gaussian field f(x) = sum_n w_n exp(-|v|^2/2), L_n v = x - mu_n
// (engine/fields/gaussian_field.h has the double reference, gaussian_pair.h the pair's
// arithmetic both use). No [B, N] intermediate exists unless the squared distances are
// asked for. float and double; D = 2 or 3. Stream-ordered, no host sync. The parameters
// live on the GPU, so their values are checked by the forward kernel as it reads them: a
// diagonal entry of L that is not positive and finite raises `refused` (check_field()
// refuses host copies at once).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tvlm {

template <class T>
struct FieldArgs {
    int dims = 3;
    size_t points_count = 0;      // B
    const T* points = nullptr;    // [B, D]
    size_t count = 0;             // N
    const T* means = nullptr;     // [N, D]
    const T* cholesky = nullptr;  // [N, D(D+1)/2], packed row by row
    const T* weights = nullptr;   // [N]
    // Where not null, a word the forward sets to 1 (never clears) when a Gaussian's diagonal
    // entry of L is not positive and finite; every value it adds to is then NaN. A mapped
    // host word (NonFiniteFlag) lets the caller read it without a sync.
    uint32_t* refused = nullptr;
};

// values [B]; squared_distances [B, N] only where not null. Throws Error, launching
// nothing, for D outside {2, 3}, B or N of 0, or a null pointer.
template <class T>
void gaussian_field_forward(const FieldArgs<T>& field, T* values, T* squared_distances, cudaStream_t stream);

template <class T>
struct FieldGradientsOut {
    T* points = nullptr;    // [B, D]
    T* means = nullptr;     // [N, D]
    T* cholesky = nullptr;  // [N, D(D+1)/2]
    T* weights = nullptr;   // [N]
};

// Gradients for d loss / d values = grad_values [B], written (not added) to every output.
// Two kernels: one thread per point and chunk of Gaussians for the points' gradients, and
// one thread per Gaussian and chunk of points for the Gaussians' gradients; each sums its
// chunk in registers, then adds it with one atomic per chunk and parameter. The chunks
// are few (enough blocks for a few per SM), so the atomics are uncontended. The forward
// splits the Gaussians the same way where the points alone give too few blocks.
template <class T>
void gaussian_field_backward(const FieldArgs<T>& field, const T* grad_values, const FieldGradientsOut<T>& out,
                             cudaStream_t stream);

}  // namespace tvlm
