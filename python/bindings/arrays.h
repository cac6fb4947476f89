#pragma once
// NumPy arrays that own engine memory (handed out with no copy), and host arrays read as
// the engine's pixels.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <memory>
#include <utility>
#include <vector>

#include "engine/textures/format.h"
#include "engine/textures/image.h"

namespace tvlm::py {

namespace nb = nanobind;

// Interleaved host pixels [H, W, C] in row-major order (the Python side makes them so).
using HostArray = nb::ndarray<nb::device::cpu, nb::c_contig, nb::ro, nb::ndim<3>>;
using NumpyArray = nb::ndarray<nb::numpy>;

nb::dlpack::dtype component_dtype(ComponentType type);
// Pixels of a [H, W, C] array: uint8, float16 or float32, C of 3 or 4. Throws Error otherwise.
HostPixels host_pixels(const HostArray& array);

// A NumPy array over `values`, which it owns from now on: no copy.
template <class T>
NumpyArray owned_array(std::vector<T> values, std::vector<size_t> shape, nb::dlpack::dtype dtype) {
    auto* heap = new std::vector<T>(std::move(values));
    nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    return NumpyArray(heap->data(), shape.size(), shape.data(), owner, nullptr, dtype);
}

// A NumPy array owning `values` (not initialised by the array: the caller wrote them).
template <class T>
NumpyArray owned_array(std::unique_ptr<T[]> values, std::vector<size_t> shape, nb::dlpack::dtype dtype) {
    nb::capsule owner(values.get(), [](void* p) noexcept { delete[] static_cast<T*>(p); });
    return NumpyArray(values.release(), shape.size(), shape.data(), owner, nullptr, dtype);
}

// A NumPy array over memory `owner` keeps alive (a Python object that holds it).
inline NumpyArray array_over(void* data, std::vector<size_t> shape, nb::dlpack::dtype dtype, nb::handle owner) {
    return NumpyArray(data, shape.size(), shape.data(), owner, nullptr, dtype);
}

}  // namespace tvlm::py
