#pragma once
// Texels of a CUDA surface as float4 values, for every SurfaceTexel: bytes 0..255 for 8-bit
// surfaces, else floats (binary16 through float). Shared by the box mip kernels and the
// tensor <-> texel copies. Device code only (include from .cu files).
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/mips/box_mips.h"

namespace tvlm {

// Texels as the average sees them: bytes 0..255 for 8-bit surfaces, else floats.
template <SurfaceTexel T>
struct Surface;
template <>
struct Surface<SurfaceTexel::uchar4> {
    using Raw = uchar4;
    __device__ static float4 value(Raw r) { return make_float4(r.x, r.y, r.z, r.w); }
    __device__ static Raw raw(float4 v) {
        return make_uchar4(static_cast<unsigned char>(v.x), static_cast<unsigned char>(v.y),
                           static_cast<unsigned char>(v.z), static_cast<unsigned char>(v.w));
    }
};
template <>
struct Surface<SurfaceTexel::half4> {
    using Raw = ushort4;  // binary16 bits
    __device__ static float h(unsigned short b) { return __half2float(__ushort_as_half(b)); }
    __device__ static unsigned short b(float v) { return __half_as_ushort(__float2half_rn(v)); }
    __device__ static float4 value(Raw r) { return make_float4(h(r.x), h(r.y), h(r.z), h(r.w)); }
    __device__ static Raw raw(float4 v) { return make_ushort4(b(v.x), b(v.y), b(v.z), b(v.w)); }
};
template <>
struct Surface<SurfaceTexel::float4> {
    using Raw = float4;
    __device__ static float4 value(Raw r) { return r; }
    __device__ static Raw raw(float4 v) { return v; }
};
template <>
struct Surface<SurfaceTexel::float1> {
    using Raw = float;
    __device__ static float4 value(Raw r) { return make_float4(r, 0.0f, 0.0f, 1.0f); }
    __device__ static Raw raw(float4 v) { return v.x; }
};

template <class V>
__device__ V read_word(cudaSurfaceObject_t s, uint32_t x_bytes, uint32_t y, uint32_t layer, bool layered) {
    V v;
    if (layered) surf2DLayeredread(&v, s, static_cast<int>(x_bytes), static_cast<int>(y), static_cast<int>(layer));
    else surf2Dread(&v, s, static_cast<int>(x_bytes), static_cast<int>(y));
    return v;
}
template <class V>
__device__ void write_word(cudaSurfaceObject_t s, V v, uint32_t x_bytes, uint32_t y, uint32_t layer, bool layered) {
    if (layered) surf2DLayeredwrite(v, s, static_cast<int>(x_bytes), static_cast<int>(y), static_cast<int>(layer));
    else surf2Dwrite(v, s, static_cast<int>(x_bytes), static_cast<int>(y));
}

template <SurfaceTexel T>
__device__ float4 load(cudaSurfaceObject_t s, uint32_t x, uint32_t y, uint32_t layer, bool layered) {
    using Raw = typename Surface<T>::Raw;
    return Surface<T>::value(read_word<Raw>(s, x * sizeof(Raw), y, layer, layered));
}

template <SurfaceTexel T>
__device__ void store(cudaSurfaceObject_t s, uint32_t x, uint32_t y, uint32_t layer, bool layered, float4 v) {
    write_word(s, Surface<T>::raw(v), x * sizeof(typename Surface<T>::Raw), y, layer, layered);
}

}  // namespace tvlm
