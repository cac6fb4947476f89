#pragma once
// What every CUDA binding does on the way in: make the caller's device current, take the
// caller's stream, and describe a tensor Python handed over by pointer and strides.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/cuda_device_guard.h"
#include "engine/error.h"
#include "cuda/nonfinite_flag.h"
#include "engine/sampling/patch.h"
#include "cuda/sampling/patch_sampling.h"
#include "cuda/tensors/tensor_texels.h"

namespace tvlm::py {

// Makes `device` current for a call and restores the caller's device after it.
using tvlm::DeviceGuard;

// What a device flag records: kernels raise it where checking device values at once would
// need a host sync, and the next call on the device (or texturevlm.check_gradients) reports it.
enum class DeviceFlag {
    nonfinite_gradient,  // a backward received NaN or infinite gradients
    refused_field,       // a Gaussian field's diagonal entry of L was not positive and finite
};

// One flag per device and purpose. Never freed: the backward of a graph captured by torch
// may hold its address for the process's life (and freeing pinned memory after CUDA's own
// teardown fails).
inline NonFiniteFlag& device_flag(DeviceFlag which, int device) {
    static auto* flags = new std::map<std::pair<DeviceFlag, int>, NonFiniteFlag>();  // under the GIL
    return (*flags)[{which, device}];
}

// The device word of a flag for the next kernels, after throwing Error(message()) where a
// finished kernel raised it since the last take (the kernels report after the fact; the
// message is built only then, off the per-call path).
template <class Message>
uint32_t* checked_device_flag(DeviceFlag which, int device, Message message) {
    NonFiniteFlag& flag = device_flag(which, device);
    if (flag.take()) throw Error(message());
    return flag.device_word();
}

inline cudaStream_t stream_of(uintptr_t stream) { return reinterpret_cast<cudaStream_t>(stream); }

inline TensorDtype tensor_dtype(const std::string& dtype) {
    if (dtype == "uint8") return TensorDtype::u8;
    if (dtype == "float16") return TensorDtype::f16;
    if (dtype == "bfloat16") return TensorDtype::bf16;
    if (dtype == "float32") return TensorDtype::f32;
    throw Error("tensors must be uint8, float16, bfloat16 or float32, not " + dtype);
}

// A tensor as Python describes it: data pointer, dtype name, strides in elements (b, c, y, x).
inline TensorView tensor_view(uintptr_t data, const std::string& dtype, const std::vector<int64_t>& strides,
                              uint32_t channels) {
    TensorView t;
    t.data = reinterpret_cast<void*>(data);
    t.dtype = tensor_dtype(dtype);
    if (strides.size() != 4) throw Error("a tensor view needs four strides (b, c, y, x)");
    if (channels != 3 && channels != 4) throw Error("tensors need 3 or 4 channels, not " + std::to_string(channels));
    if (!t.data) throw Error("the tensor has no data (a null pointer)");
    t.stride_b = strides[0];
    t.stride_c = strides[1];
    t.stride_y = strides[2];
    t.stride_x = strides[3];
    t.channels = channels;
    return t;
}

}  // namespace tvlm::py
