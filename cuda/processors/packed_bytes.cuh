#pragma once
// 8-bit images read as whole 32-bit words: the processors' kernels (two_pass_resize.cu,
// fused_resize.cu) read a row's bytes four at a time and convert each with integer ops,
// where a byte load and a conversion per tap would bound them.
#include <cstdint>

#include "cuda/tensors/tensor_texels.h"

namespace tvlm::packed_bytes {

// Byte B of a word as a float without the conversion instruction (a quarter of the FMA
// rate, and a byte is read by several taps): 0x4B0000XX is 2^23 + XX as a float, exactly.
template <int B>
__device__ __forceinline__ float byte_value(uint32_t word) {
    return __int_as_float(int(__byte_perm(word, 0x4B000000u, 0x7440u | B))) - 8388608.0f;
}

// Whether whole words can be read: rows contiguous (stride_x 1) and every image starting on
// a word (rows may start anywhere: a row's first word holds bytes before it, of the same
// image).
inline bool reads_words(const TensorView& source, const ImageList& sources) {
    if (source.stride_x != 1) return false;
    if (!sources.count) return (reinterpret_cast<uintptr_t>(source.data) & 3) == 0;
    for (uint32_t i = 0; i < sources.count; ++i)
        if (reinterpret_cast<uintptr_t>(sources.images[i]) & 3) return false;
    return true;
}

}  // namespace tvlm::packed_bytes
