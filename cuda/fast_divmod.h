#pragma once
// Division by a run-time divisor as a multiply-high, an add and a shift (Hacker's Delight,
// 10-9; the form CUTLASS's FastDivmod uses): kernels that map a flat index to a place by
// sizes known only at launch (the processors' output order, resize_output.cuh) spent most of their
// instructions in 32-bit divisions. The host builds it, the device divides.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "shaders/shader_params.h"

namespace tvlm {

struct FastDivmod {
    uint32_t divisor = 1, multiplier = 1, shift = 0;

    FastDivmod() = default;
    // d >= 1. shift = ceil(log2 d), multiplier = floor(2^32 (2^shift - d) / d) + 1.
    explicit FastDivmod(uint32_t d) : divisor(d) {
        const gpu::DivisorGpu m = gpu::make_divisor(d);
        multiplier = m.multiplier;
        shift = m.shift;
    }

#ifdef __CUDACC__
    __device__ uint32_t div(uint32_t n) const {
        return static_cast<uint32_t>((uint64_t{__umulhi(n, multiplier)} + n) >> shift);
    }
    // Quotient, and n - quotient * divisor in `remainder`.
    __device__ uint32_t divmod(uint32_t n, uint32_t& remainder) const {
        const uint32_t q = div(n);
        remainder = n - q * divisor;
        return q;
    }
#endif
};

}  // namespace tvlm
