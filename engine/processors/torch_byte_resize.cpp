#include "engine/processors/torch_byte_resize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/processors/byte_filter_avx2.h"
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

// Lanczos with 3 lobes: sinc(x) sinc(x / 3) inside |x| < 3 (torch's and Pillow's).
double sinc(double x) {
    if (x == 0.0) return 1.0;
    x *= 3.14159265358979323846;
    return std::sin(x) / x;
}

double lanczos(double x) { return -3.0 <= x && x < 3.0 ? sinc(x) * sinc(x / 3.0) : 0.0; }

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
    const double half_width = filter == ByteResizeFilter::lanczos   ? 3.0
                              : filter == ByteResizeFilter::bicubic ? 2.0
                                                                    : 1.0;
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
            wi[j] = filter == ByteResizeFilter::bicubic   ? bicubic(x)
                    : filter == ByteResizeFilter::lanczos ? lanczos(x)
                                                          : triangle(x);
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

// The across taps' int16 weights two to an int32, four taps to a step of the AVX2 pass
// (zero past each output's taps).
std::vector<int32_t> paired_weights(const AxisTaps& a, int64_t outputs, int64_t* pairs_per_output) {
    const int64_t pairs = 2 * ((a.taps + 3) / 4);
    std::vector<int32_t> paired(size_t(outputs * pairs), 0);
    for (int64_t o = 0; o < outputs; ++o)
        for (int64_t j = 0; j < a.taps; ++j) {
            const uint32_t w = uint16_t(a.weights[size_t(o * a.taps + j)]);
            paired[size_t(o * pairs + j / 2)] |= int32_t(j % 2 ? w << 16 : w);
        }
    *pairs_per_output = pairs;
    return paired;
}


// The scalar across pass: rows [row_first, row_first + rows) of the source into `mid`
// ([rows][width][c], tightly packed), or the window's columns copied where the width is
// unchanged.
void across_rows(const ByteImageView& image, const AxisTaps& tx, bool across, int64_t left, int64_t width,
                 int64_t row_first, int64_t rows, uint8_t* mid) {
    const int64_t c = image.channels;
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
    in_parts(rows, width * c * (across ? taps_x : 1), [=](int64_t first, int64_t end) {
        for (int64_t y = first; y < end; ++y) {
            const uint8_t* row = pixels + (row_first + y) * stride_y;
            uint8_t* out = mid + y * width * c;
            if (!across && stride_c == 1 && stride_x == c) {  // packed pixels: the window's bytes as they are
                std::copy_n(row + left * c, width * c, out);
                continue;
            }
            for (int64_t x = 0; x < width; ++x) {
                const int64_t ox = left + x;
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
}

// The AVX2 across pass of RGB rows into `mid` ([rows][width][3], tightly packed). Rows whose
// pixels are 3 or 4 bytes apart, channels adjacent, are read in place where the pass's reads
// past their last pixel stay inside the image; any other row (planar images, the last rows)
// is first copied as 4-byte pixels into its part's scratch (planes interleaved 16 pixels at
// a time).
void across_rgb_rows(const ByteImageView& image, const AxisTaps& tx, int64_t left, int64_t width, int64_t row_first,
                     int64_t rows, uint8_t* mid) {
    const size_t pitch = size_t(width) * 3;
    int64_t pairs_per_output = 0;
    const std::vector<int32_t> pairs = paired_weights(tx, int64_t(tx.first.size()), &pairs_per_output);
    const avx2::PairedTaps taps{tx.first.data(), tx.count.data(), pairs.data(), pairs_per_output, tx.precision};
    const int64_t w = image.width, sx = image.stride_x, sy = image.stride_y, sc = image.stride_c;
    const bool in_place = sc == 1 && (sx == 3 || sx == 4) && sy > 0;
    // One past the image's last byte: a row is read in place where its reads end before it
    // (compared as addresses: a pointer past the end is not one the language allows).
    const uintptr_t image_end = reinterpret_cast<uintptr_t>(image.data) +
                                uintptr_t((int64_t{image.height} - 1) * sy + (w - 1) * sx + 2 * sc + 1);
    constexpr int64_t kReadPast = 16;  // a load's bytes from a tap group's first pixel
    const size_t scratch_bytes = size_t(w * 4 + 4 * kReadPast);
    const int64_t work = width * 3 * tx.taps;
    std::vector<uint8_t> scratch(size_t(part_count(rows, work)) * 2 * scratch_bytes, 0);
    const uint8_t* const pixels = image.data;
    in_parts(rows, work, [&, pixels](int64_t first, int64_t end, int64_t part) {
        uint8_t* own = scratch.data() + size_t(part) * 2 * scratch_bytes;
        // Row y's pixels and their distance: in place, or copied into scratch `slot`.
        const auto source = [&](int64_t y, int slot, int* step) -> const uint8_t* {
            const uint8_t* row = pixels + (row_first + y) * sy;
            if (in_place && reinterpret_cast<uintptr_t>(row) + uintptr_t((w - 1) * sx + kReadPast) <= image_end) {
                *step = int(sx);
                return row;
            }
            uint8_t* copy = own + size_t(slot) * scratch_bytes;
            if (sx == 1) avx2::interleave_rgb(row, row + sc, row + 2 * sc, w, copy);  // planes
            else
                for (int64_t x = 0; x < w; ++x)
                    for (int64_t ch = 0; ch < 3; ++ch) copy[x * 4 + ch] = row[x * sx + ch * sc];
            *step = 4;
            return copy;
        };
        for (int64_t y = first; y < end; y += 2) {
            int step0 = 0, step1 = 0;
            const uint8_t* row0 = source(y, 0, &step0);
            if (y + 1 < end) {
                const uint8_t* row1 = source(y + 1, 1, &step1);
                if (step0 == step1) {
                    avx2::across_rgb(row0, row1, step0, taps, left, width, mid + size_t(y) * pitch,
                                     mid + size_t(y + 1) * pitch);
                    continue;
                }
                avx2::across_rgb(row1, nullptr, step1, taps, left, width, mid + size_t(y + 1) * pitch, nullptr);
            }
            avx2::across_rgb(row0, nullptr, step0, taps, left, width, mid + size_t(y) * pitch, nullptr);
        }
    });
}

// The scalar down pass of one output row: `count` rows from `rows`, `pitch` apart.
void down_row(const uint8_t* rows, size_t pitch, const int16_t* weights, int64_t count, int precision, size_t n,
              uint8_t* out) {
    // Tap by tap over a stretch of the row, so the inner loop runs along contiguous bytes
    // (integer sums: their order does not change them). No allocation in a thread.
    constexpr size_t kStretch = 1024;
    int32_t sums[kStretch];
    for (size_t from = 0; from < n; from += kStretch) {
        const size_t stretch = std::min(kStretch, n - from);
        std::fill(sums, sums + stretch, 1 << (precision - 1));
        for (int64_t j = 0; j < count; ++j) {
            const uint8_t* bytes = rows + size_t(j) * pitch + from;
            const int32_t weight = weights[j];
            for (size_t i = 0; i < stretch; ++i) sums[i] += weight * bytes[i];
        }
        for (size_t i = 0; i < stretch; ++i) out[from + i] = rounded_byte(sums[i], precision);
    }
}

// The across pass's rows: a buffer each calling thread keeps between calls, up to
// kKeptScratchBytes (larger ones are made for the call and freed after it, so a thread
// keeps at most that much). A fresh buffer's first writes fault its pages in, which cost
// more than the pass on some hosts. 16 MiB holds a 2048² image's rows for any of the
// processors' resizes.
constexpr size_t kKeptScratchBytes = size_t{16} << 20;

uint8_t* across_scratch(size_t bytes, std::unique_ptr<uint8_t[]>& for_this_call) {
    thread_local std::unique_ptr<uint8_t[]> kept;
    thread_local size_t kept_bytes = 0;
    if (bytes > kKeptScratchBytes) {
        for_this_call.reset(new uint8_t[bytes]);
        return for_this_call.get();
    }
    if (kept_bytes < bytes) {
        kept.reset();  // the old one freed before the larger is made
        kept_bytes = 0;
        kept.reset(new uint8_t[bytes]);
        kept_bytes = bytes;
    }
    return kept.get();
}

}  // namespace

void resize_bytes_as_torch(const ByteImageView& image, uint32_t resized_width, uint32_t resized_height, uint32_t left,
                           uint32_t top, uint32_t width, uint32_t height, ByteResizeFilter filter, uint8_t* out,
                           ByteResizeCode code) {
    if (!image.data || image.width == 0 || image.height == 0 || image.channels == 0)
        throw Error("the image to resize is empty");
    if (resized_width == 0 || resized_height == 0) throw Error("an image resizes to a positive size");
    if (width == 0 || height == 0 || uint64_t{left} + width > resized_width || uint64_t{top} + height > resized_height)
        throw Error("the window " + std::to_string(width) + "x" + std::to_string(height) + " at (" +
                    std::to_string(left) + ", " + std::to_string(top) + ") is empty or outside the resized " +
                    std::to_string(resized_width) + "x" + std::to_string(resized_height) + " image");
    const int64_t c = image.channels;
    const bool simd = code == ByteResizeCode::fastest && avx2::available();
    // Pass 1, across: every source row the window's output rows read, the window's columns
    // (a pass torch skips where the width is unchanged: the bytes pass through).
    const bool across = resized_width != image.width, down = resized_height != image.height;
    const AxisTaps tx = across ? axis_taps(image.width, resized_width, filter) : AxisTaps{};
    const AxisTaps ty = down ? axis_taps(image.height, resized_height, filter) : AxisTaps{};
    const size_t last = size_t{top} + height - 1;
    const int64_t row_first = down ? ty.first[top] : top;
    const int64_t row_end = down ? ty.first[last] + ty.count[last] : int64_t{top} + height;
    const int64_t rows = row_end - row_first;
    const size_t row_bytes = size_t(int64_t{width} * c);
    const bool simd_across = simd && across && c == 3;  // the AVX2 across pass takes RGB
    // Where the height is unchanged, the across pass writes the result itself.
    std::unique_ptr<uint8_t[]> large_scratch;
    uint8_t* const mid = down ? across_scratch(size_t(rows) * row_bytes, large_scratch) : nullptr;
    uint8_t* const across_out = down ? mid : out;
    if (simd_across) across_rgb_rows(image, tx, left, width, row_first, rows, across_out);
    else across_rows(image, tx, across, left, width, row_first, rows, across_out);
    if (!down) return;
    // Pass 2, down: the window's rows from the row results.
    const int16_t* const weights_y = ty.weights.data();
    const int64_t* const first_y = ty.first.data();
    const int64_t* const count_y = ty.count.data();
    const int64_t taps_y = ty.taps;
    const int precision_y = ty.precision;
    const uint8_t* const mid_read = mid;
    uint8_t* const result_bytes = out;
    in_parts(height, int64_t(row_bytes) * taps_y, [=](int64_t begin, int64_t end) {
        for (int64_t y = begin; y < end; ++y) {
            const int64_t oy = int64_t{top} + y;
            const uint8_t* rows_read = mid_read + size_t(first_y[oy] - row_first) * row_bytes;
            uint8_t* row_out = result_bytes + size_t(y) * row_bytes;
            const int16_t* weights = weights_y + oy * taps_y;
            // AVX2 32 bytes at a time where the CPU has it, the scalar pass for what is left.
            const size_t done = simd ? avx2::down(rows_read, row_bytes, weights, count_y[oy], precision_y, row_bytes,
                                                  row_out)
                                     : 0;
            down_row(rows_read + done, row_bytes, weights, count_y[oy], precision_y, row_bytes - done, row_out + done);
        }
    });
}

}  // namespace tvlm
