#pragma once
// Two elements of one type as one vector (PairOf<T>::type), for kernels that load or store
// neighbouring elements at once where they are aligned to the pair.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector_types.h>

#include <cstdint>

namespace tvlm {

template <class T>
struct PairOf;
template <>
struct PairOf<float> {
    using type = float2;
};
template <>
struct PairOf<double> {
    using type = double2;
};
template <>
struct PairOf<__half> {
    using type = __half2;
};
template <>
struct PairOf<__nv_bfloat16> {
    using type = __nv_bfloat162;
};
template <>
struct PairOf<uint8_t> {
    using type = uchar2;
};

}  // namespace tvlm
