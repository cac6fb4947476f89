#pragma once
// One element of a tensor of any of the engine's dtypes, as a float: what every kernel that
// reads or writes DLPack tensors (tensor_texels.cu, image_resize.cu) does per element.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/tensors/tensor_texels.h"

namespace tvlm {

__device__ inline float load_element(const void* data, TensorDtype dtype, int64_t i) {
    switch (dtype) {
        case TensorDtype::u8: return static_cast<const unsigned char*>(data)[i];
        case TensorDtype::f16: return __half2float(static_cast<const __half*>(data)[i]);
        case TensorDtype::bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(data)[i]);
        case TensorDtype::f32: return static_cast<const float*>(data)[i];
    }
    return 0.0f;
}

// Element 0 of image b: the list's image where there is one, else the view's batch.
__device__ inline const void* image_data(const TensorView& view, const ImageList& list, uint32_t b) {
    if (list.count) return list.images[b];
    return static_cast<const unsigned char*>(view.data) + int64_t(b) * view.stride_b * element_bytes(view.dtype);
}

// Floats convert to float16 / bfloat16 to nearest even; to uint8 by truncation (callers round).
__device__ inline void store_element(void* data, TensorDtype dtype, int64_t i, float v) {
    switch (dtype) {
        case TensorDtype::u8: static_cast<unsigned char*>(data)[i] = static_cast<unsigned char>(v); break;
        case TensorDtype::f16: static_cast<__half*>(data)[i] = __float2half_rn(v); break;
        case TensorDtype::bf16: static_cast<__nv_bfloat16*>(data)[i] = __float2bfloat16_rn(v); break;
        case TensorDtype::f32: static_cast<float*>(data)[i] = v; break;
    }
}

}  // namespace tvlm
