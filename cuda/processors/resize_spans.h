#pragma once
// The software filters' span tables: for each window column (or row), the input span it
// reads and its weights, computed once per window by image_resize.cu's span_table_kernel
// and read by the two-pass and the fused kernels.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "cuda/processors/image_resize.h"

namespace tvlm::resize_spans {

// One axis's spans and weights (outputs [offset, offset + n) of the window), written by
// span_table_kernel at the start of the scratch: the passes read a weight per tap instead
// of evaluating the filter (and its normalization) for every pixel. The values are span()'s,
// so the sums are unchanged.
struct SpanTable {
    int* first = nullptr;
    int* count = nullptr;
    float* weights = nullptr;  // [n][taps]
    uint32_t taps = 0;
};

// The most taps a span of the resize holds in exact arithmetic: ceil(2 * support)
// (floor(a + 2s) - floor(a) <= ceil(2s)). The kernels' float spans can be one longer where
// their ends round across an integer: kernels that loop over this many taps fixed at compile
// time take the table's count for those.
inline uint32_t span_taps(uint32_t in_size, uint32_t out_size, SoftwareFilter filter) {
    const double scale = double(in_size) / double(out_size);
    const double support = (filter == SoftwareFilter::bilinear ? 1.0 : 2.0) * std::max(scale, 1.0);
    return uint32_t(std::ceil(2.0 * support));
}

// The most taps an output of a resize from in_size to out_size reads, the tables' width:
// span_taps + 2 (its float rounding, with room to spare).
inline uint32_t max_taps(uint32_t in_size, uint32_t out_size, SoftwareFilter filter) {
    return span_taps(in_size, out_size, filter) + 2;
}

inline size_t table_bytes(uint32_t n, uint32_t taps) {
    return size_t{n} * (2 * sizeof(int) + size_t{taps} * sizeof(float));
}

inline SpanTable table_at(unsigned char* at, uint32_t n, uint32_t taps) {
    SpanTable t;
    t.first = reinterpret_cast<int*>(at);
    t.count = t.first + n;
    t.weights = reinterpret_cast<float*>(t.count + n);
    t.taps = taps;
    return t;
}

}  // namespace tvlm::resize_spans
