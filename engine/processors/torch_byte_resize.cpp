#include "engine/processors/torch_byte_resize.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/processors/in_parts.h"

namespace tvlm {

namespace {

// Torch's antialiasing filters, in its own expressions (aten/src/ATen/native/cpu/
// UpSampleKernel.cpp: cubic_convolution1/2 with a = -0.5, and the triangle), in double.
double bicubic(double x) {
    constexpr double a = -0.5;
    x = std::abs(x);
    if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
    return 0.0;
}

double triangle(double x) {
    x = std::abs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}

// One axis's filter: output i reads inputs [first[i], first[i] + count[i]) with int16
// weights[i * taps + j], the sum rounded at `precision` bits.
struct AxisTaps {
    std::vector<int64_t> first, count;
    std::vector<int16_t> weights;
    int64_t taps = 0;
    int precision = 0;
};

AxisTaps axis_taps(int64_t in_size, int64_t out_size, ByteResizeFilter filter) {
    const double scale = double(in_size) / double(out_size);
    const double half_width = filter == ByteResizeFilter::bicubic ? 2.0 : 1.0;
    const double support = scale >= 1.0 ? half_width * scale : half_width;
    const double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
    AxisTaps a;
    a.taps = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
    a.first.resize(size_t(out_size));
    a.count.resize(size_t(out_size));
    std::vector<double> w(size_t(out_size * a.taps), 0.0);
    double largest = 0.0;
    for (int64_t i = 0; i < out_size; ++i) {
        const double centre = scale * (double(i) + 0.5);
        const int64_t first = std::max(static_cast<int64_t>(centre - support + 0.5), int64_t{0});
        const int64_t count = std::clamp(std::min(static_cast<int64_t>(centre + support + 0.5), in_size) - first,
                                         int64_t{0}, a.taps);
        double* wi = &w[size_t(i * a.taps)];
        double total = 0.0;
        for (int64_t j = 0; j < count; ++j) {
            const double x = (double(j + first) - centre + 0.5) * invscale;
            wi[j] = filter == ByteResizeFilter::bicubic ? bicubic(x) : triangle(x);
            total += wi[j];
        }
        if (total != 0.0)
            for (int64_t j = 0; j < count; ++j) largest = std::max(largest, wi[j] /= total);
        a.first[size_t(i)] = first;
        a.count[size_t(i)] = count;
    }
    // The most bits that keep every weight, doubled, inside int16.
    for (a.precision = 0; a.precision < 22; ++a.precision)
        if (static_cast<int>(0.5 + largest * double(1 << (a.precision + 1))) >= (1 << 15)) break;
    a.weights.resize(w.size());
    for (size_t k = 0; k < w.size(); ++k) {
        const double v = w[k] * double(1 << a.precision);
        a.weights[k] = static_cast<int16_t>(v < 0 ? static_cast<int>(-0.5 + v) : static_cast<int>(0.5 + v));
    }
    return a;
}

uint8_t rounded_byte(int32_t sum, int precision) { return static_cast<uint8_t>(std::clamp(sum >> precision, 0, 255)); }

}  // namespace

std::vector<uint8_t> resize_bytes_as_torch(const ByteImageView& image, uint32_t resized_width, uint32_t resized_height,
                                           uint32_t left, uint32_t top, uint32_t width, uint32_t height,
                                           ByteResizeFilter filter) {
    if (!image.data || image.width == 0 || image.height == 0 || image.channels == 0)
        throw Error("the image to resize is empty");
    if (resized_width == 0 || resized_height == 0) throw Error("an image resizes to a positive size");
    if (width == 0 || height == 0 || uint64_t{left} + width > resized_width || uint64_t{top} + height > resized_height)
        throw Error("the window " + std::to_string(width) + "x" + std::to_string(height) + " at (" +
                    std::to_string(left) + ", " + std::to_string(top) + ") is empty or outside the resized " +
                    std::to_string(resized_width) + "x" + std::to_string(resized_height) + " image");
    const int64_t c = image.channels;
    // Pass 1, across: every source row the window's output rows read, the window's columns
    // (a pass torch skips where the width is unchanged: the bytes pass through).
    const bool across = resized_width != image.width, down = resized_height != image.height;
    const AxisTaps tx = across ? axis_taps(image.width, resized_width, filter) : AxisTaps{};
    const AxisTaps ty = down ? axis_taps(image.height, resized_height, filter) : AxisTaps{};
    const size_t last = size_t{top} + height - 1;
    const int64_t row_first = down ? ty.first[top] : top;
    const int64_t row_end = down ? ty.first[last] + ty.count[last] : int64_t{top} + height;
    const int64_t rows = row_end - row_first;
    std::vector<uint8_t> mid(size_t(rows * width * c));
    const int32_t half_x = across ? 1 << (tx.precision - 1) : 0;
    // Locals, not the captured objects, in the loops: the byte stores may alias anything the
    // lambda reaches by reference, which would reload every one of them per store.
    const uint8_t* const pixels = image.data;
    const int64_t stride_y = image.stride_y, stride_x = image.stride_x, stride_c = image.stride_c;
    const int16_t* const weights_x = tx.weights.data();
    const int64_t* const first_x = tx.first.data();
    const int64_t* const count_x = tx.count.data();
    const int64_t taps_x = tx.taps;
    const int precision_x = tx.precision;
    uint8_t* const mid_bytes = mid.data();
    in_parts(rows, int64_t{width} * c * (across ? taps_x : 1), [=](int64_t first, int64_t end) {
        for (int64_t y = first; y < end; ++y) {
            const uint8_t* row = pixels + (row_first + y) * stride_y;
            uint8_t* out = mid_bytes + y * int64_t{width} * c;
            for (int64_t x = 0; x < int64_t{width}; ++x) {
                const int64_t ox = int64_t{left} + x;
                if (across && c == 3) {
                    // RGB, the processors' case: a tap's weight is read once for its three
                    // channels, whose sums run side by side.
                    const int16_t* k = weights_x + ox * taps_x;
                    const uint8_t* in = row + first_x[ox] * stride_x;
                    int32_t r = half_x, g = half_x, b = half_x;
                    for (int64_t j = 0; j < count_x[ox]; ++j, in += stride_x) {
                        const int32_t w = k[j];
                        r += w * in[0];
                        g += w * in[stride_c];
                        b += w * in[2 * stride_c];
                    }
                    out[x * 3] = rounded_byte(r, precision_x);
                    out[x * 3 + 1] = rounded_byte(g, precision_x);
                    out[x * 3 + 2] = rounded_byte(b, precision_x);
                    continue;
                }
                for (int64_t ch = 0; ch < c; ++ch) {
                    if (!across) {
                        out[x * c + ch] = row[ox * stride_x + ch * stride_c];
                        continue;
                    }
                    const int16_t* k = weights_x + ox * taps_x;
                    const uint8_t* in = row + first_x[ox] * stride_x + ch * stride_c;
                    int32_t sum = half_x;
                    for (int64_t j = 0; j < count_x[ox]; ++j) sum += int32_t{k[j]} * in[j * stride_x];
                    out[x * c + ch] = rounded_byte(sum, precision_x);
                }
            }
        }
    });
    if (!down) return mid;
    // Pass 2, down: the window's rows from the row results.
    std::vector<uint8_t> result(size_t(int64_t{height} * width * c));
    const int32_t half_y = 1 << (ty.precision - 1);
    const size_t row_bytes = size_t(int64_t{width} * c);
    const int16_t* const weights_y = ty.weights.data();
    const int64_t* const first_y = ty.first.data();
    const int64_t* const count_y = ty.count.data();
    const int64_t taps_y = ty.taps;
    const int precision_y = ty.precision;
    const uint8_t* const mid_read = mid.data();
    uint8_t* const result_bytes = result.data();
    in_parts(height, int64_t(row_bytes) * taps_y, [=](int64_t begin, int64_t end) {
        // Tap by tap over a stretch of an output row, so the inner loop runs along contiguous
        // bytes (integer sums: their order does not change them). No allocation in a thread.
        constexpr size_t kStretch = 1024;
        int32_t sums[kStretch];
        for (int64_t y = begin; y < end; ++y) {
            const int64_t oy = int64_t{top} + y;
            const int16_t* k = weights_y + oy * taps_y;
            const uint8_t* rows_read = mid_read + size_t(first_y[oy] - row_first) * row_bytes;
            for (size_t from = 0; from < row_bytes; from += kStretch) {
                const size_t n = std::min(kStretch, row_bytes - from);
                std::fill(sums, sums + n, half_y);
                for (int64_t j = 0; j < count_y[oy]; ++j) {
                    const uint8_t* bytes = rows_read + size_t(j) * row_bytes + from;
                    const int32_t weight = k[j];
                    for (size_t i = 0; i < n; ++i) sums[i] += weight * bytes[i];
                }
                uint8_t* out = result_bytes + size_t(y) * row_bytes + from;
                for (size_t i = 0; i < n; ++i) out[i] = rounded_byte(sums[i], precision_y);
            }
        }
    });
    return result;
}

}  // namespace tvlm
