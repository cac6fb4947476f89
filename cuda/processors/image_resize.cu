// One thread per output pixel of one image, in output order (so every store of a warp is
// contiguous): find the pixel's place in the resized image, filter (the texture unit, or
// the second of the software filter's two passes), rescale + normalize each channel, store it in every
// time slot.
#include "cuda/processors/image_resize.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "cuda/cuda_check.h"
#include "cuda/processors/fused_resize.h"
#include "cuda/processors/packed_bytes.cuh"
#include "cuda/processors/resize_output.cuh"
#include "cuda/processors/resize_spans.h"
#include "cuda/tensors/tensor_elements.cuh"
#include "engine/error.h"

namespace tvlm {

namespace {

using namespace resize_output;
using namespace resize_spans;

constexpr int kBlock = 256;

template <class Out>
__global__ void texture_kernel(cudaTextureObject_t texture, bool layered, float texel_scale, ResizeTarget t, Order o) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, image = blockIdx.y;
    if (i >= o.plane) return;
    const Place at = place(t, o, i);
    // The output pixel's centre, and one output pixel as the footprint: the texture unit
    // picks the level (and the anisotropic taps when the two scales differ).
    const int x = t.crop_x + int(at.x), y = t.crop_y + int(at.y);
    if (x < 0 || y < 0 || x >= int(t.resized_width) || y >= int(t.resized_height)) {  // the zero padding
        const float zero[3] = {0.0f, 0.0f, 0.0f};
        write_pixel<Out>(t, image, at, zero);
        return;
    }
    const float du = 1.0f / float(t.resized_width), dv = 1.0f / float(t.resized_height);
    const float u = (float(x) + 0.5f) * du, v = (float(y) + 0.5f) * dv;
    const float4 s = layered ? tex2DLayeredGrad<float4>(texture, u, v, int(t.first_layer + image),
                                                        make_float2(du, 0.0f), make_float2(0.0f, dv))
                             : tex2DGrad<float4>(texture, u, v, make_float2(du, 0.0f), make_float2(0.0f, dv));
    const float value[3] = {s.x * texel_scale, s.y * texel_scale, s.z * texel_scale};
    write_pixel<Out>(t, image, at, value);
}

// ---- PyTorch's antialiased bicubic and bilinear (aten/src/ATen/native/cuda/UpSample.cuh), in float ----

// Keys' cubic with a = -0.5, as torch's antialiasing filter writes it.
__device__ float bicubic_filter(float x) {
    constexpr float a = -0.5f;
    x = fabsf(x);
    if (x < 1.0f) return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
    if (x < 2.0f) return (((x - 5.0f) * x + 8.0f) * x - 4.0f) * a;
    return 0.0f;
}

// The triangle, as torch's antialiased bilinear writes it.
__device__ float bilinear_filter(float x) {
    x = fabsf(x);
    return x < 1.0f ? 1.0f - x : 0.0f;
}

__device__ float filter_value(SoftwareFilter filter, float x) {
    return filter == SoftwareFilter::bilinear ? bilinear_filter(x) : bicubic_filter(x);
}

// The input span and weights of output index `i` along one axis: input [first, first +
// count), weight j = filter((j + first - centre + 0.5) * invscale) / total.
struct Span {
    int first, count;
    float first_minus_centre, invscale, total;
    SoftwareFilter filter;
    __device__ float weight(int j) const {
        return filter_value(filter, (j + first_minus_centre + 0.5f) * invscale) / total;
    }
};

__device__ Span span(uint32_t i, uint32_t in_size, uint32_t out_size, SoftwareFilter filter) {
    const float scale = float(in_size) / float(out_size);
    const float half_width = filter == SoftwareFilter::bilinear ? 1.0f : 2.0f;  // torch's interp_size / 2
    const float support = scale >= 1.0f ? half_width * scale : half_width;
    const float centre = scale * (float(i) + 0.5f);
    Span s;
    s.first = max(int(centre - support + 0.5f), 0);
    s.count = min(int(centre + support + 0.5f), int(in_size)) - s.first;
    s.first_minus_centre = float(s.first) - centre;
    s.invscale = scale >= 1.0f ? float(1.0 / double(scale)) : 1.0f;
    s.filter = filter;
    float total = 0.0f;
    for (int j = 0; j < s.count; ++j) total += filter_value(filter, (j + s.first_minus_centre + 0.5f) * s.invscale);
    s.total = total != 0.0f ? total : 1.0f;
    return s;
}

// blockIdx.y 0: the x axis (window columns), 1: the y axis (window rows).
__global__ void span_table_kernel(ResizeTarget t, uint32_t source_width, uint32_t source_height, SoftwareFilter filter,
                                  SpanTable x_table, SpanTable y_table) {
    const bool across = blockIdx.y == 0;
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, n = across ? t.width : t.height;
    if (i >= n) return;
    const int at = (across ? t.crop_x : t.crop_y) + int(i);
    const uint32_t in_size = across ? source_width : source_height;
    const uint32_t out_size = across ? t.resized_width : t.resized_height;
    const SpanTable& table = across ? x_table : y_table;
    if (at < 0 || at >= int(out_size)) {
        // The zero padding: no taps. Its span sits at the image's near edge, so a staged
        // block's span (first of its first column to end of its last) stays the image's.
        table.first[i] = at < 0 ? 0 : int(in_size);
        table.count[i] = 0;
        return;
    }
    const Span s = span(uint32_t(at), in_size, out_size, filter);
    table.first[i] = s.first;
    table.count[i] = s.count;
    const int taps = min(s.count, int(table.taps));  // max_taps bounds count: the min only guards the table
    for (int j = 0; j < taps; ++j) table.weights[size_t{i} * table.taps + j] = s.weight(j);
}

// Separable, as torch's sum is: pass 1 filters each source row across (the window's
// columns) into float scratch [image][source row][window column][channel]; pass 2 filters
// each output pixel's column of row results. Each term is torch's own term in torch's
// order (taps ascending, rows first), so the values equal the 2-D sum bit for bit, at a
// fraction of its work (a 4096^2 -> 224^2 shrink reads 73 taps a side: 73 + 73, not 73^2).

constexpr int kRowBlock = 64;         // pass 1: window columns per block
constexpr uint32_t kMaxRowsEach = 8;  // pass 1: source rows per thread, where there are rows enough
// Pass 1's threads wanted before a thread takes several rows (its span and weights are read
// once for them): a few waves of a large GPU. Fewer rows each below it, down to one: a
// small image's pass is otherwise a few long chains of dependent loads per thread.
constexpr uint64_t kEnoughRowThreads = uint64_t{1} << 20;

template <class In>
__device__ float input_value(In v) {
    return static_cast<float>(v);
}
// A byte without the conversion instruction (a quarter of the FMA rate; the taps convert
// each byte several times): 0x4B0000XX is 2^23 + XX as a float, exactly.
template <>
__device__ float input_value<uint8_t>(uint8_t v) {
    return __int_as_float(0x4B000000 | int(v)) - 8388608.0f;
}
template <>
__device__ float input_value<__half>(__half v) {
    return __half2float(v);
}
template <>
__device__ float input_value<__nv_bfloat16>(__nv_bfloat16 v) {
    return __bfloat162float(v);
}

// One template per input dtype: the taps are the hot loop, so a load is one instruction
// and a conversion, not a switch on the dtype.
template <class In>
__global__ void rows_kernel(TensorView source, const __grid_constant__ ImageList sources, uint32_t source_height,
                            ResizeTarget t, SpanTable x_table, float* scratch, uint32_t rows_each) {
    const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, image = blockIdx.z;
    if (x >= t.width) return;
    const int first = x_table.first[x], count = x_table.count[x];
    const float* wx = x_table.weights + size_t{x} * x_table.taps;
    const In* data = static_cast<const In*>(image_data(source, sources, t.first_layer + image));
    const In* first_column = data + int64_t(first) * source.stride_x;
    const int64_t step = source.stride_x, channel[3] = {0, source.stride_c, 2 * source.stride_c};
    const uint32_t first_row = blockIdx.y * rows_each, end_row = min(source_height, first_row + rows_each);
    float* out = scratch + (size_t{image} * source_height * t.width + x) * 3;
    for (uint32_t y = first_row; y < end_row; ++y) {
        const In* tap = first_column + int64_t(y) * source.stride_y;
        float across[3] = {0.0f, 0.0f, 0.0f};
#pragma unroll 4
        for (int j = 0; j < count; ++j, tap += step) {
            const float w = wx[j];
            for (int c = 0; c < 3; ++c) across[c] += input_value(tap[channel[c]]) * w;
        }
        float* o = out + size_t{y} * t.width * 3;
        for (int c = 0; c < 3; ++c) o[c] = across[c];
    }
}

// The row pass for 8-bit images read as words (packed_bytes::reads_words): a thread's column
// weights sit in registers, G groups of four (zeros past its count), and each row's taps
// are read as G + 1 words a channel, lined up with the weights by a funnel shift of the
// row's head bytes: a word load per four taps, where rows_kernel loads a byte and a weight
// per tap. The zero weights past a column's taps add +0 after its last term, which leaves
// the sum unchanged, so the terms and their order are rows_kernel's (and torch's). Offsets
// are 32-bit (word_offsets_fit) and one bounds check covers a row's three channels, so
// their loads are in flight together and their three sums interleave.
template <int G>
__global__ void rows_words_kernel(TensorView source, const __grid_constant__ ImageList sources, uint32_t source_width,
                                  uint32_t source_height, ResizeTarget t, SpanTable x_table, float* scratch,
                                  uint32_t rows_each) {
    using packed_bytes::byte_value;
    const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, image = blockIdx.z;
    if (x >= t.width) return;
    const int first = x_table.first[x], count = x_table.count[x];
    float w[4 * G];
#pragma unroll
    for (int j = 0; j < 4 * G; ++j) w[j] = j < count ? x_table.weights[size_t{x} * x_table.taps + j] : 0.0f;
    const unsigned char* data = static_cast<const unsigned char*>(image_data(source, sources, t.first_layer + image));
    const uint32_t stride_y = uint32_t(source.stride_y), stride_c = uint32_t(source.stride_c);
    // One past the image's last byte: a row's words must not reach past it.
    const uint32_t end = 2 * stride_c + (source_height - 1) * stride_y + source_width;
    const uint32_t first_row = blockIdx.y * rows_each, end_row = min(source_height, first_row + rows_each);
    float* out = scratch + (size_t{image} * source_height * t.width + x) * 3;
    for (uint32_t y = first_row; y < end_row; ++y) {
        const uint32_t at[3] = {y * stride_y + uint32_t(first), y * stride_y + uint32_t(first) + stride_c,
                                y * stride_y + uint32_t(first) + 2 * stride_c};
        bool inside = true;
#pragma unroll
        for (int c = 0; c < 3; ++c) inside &= (at[c] & ~3u) + 4 * (G + 1) <= end;
        float across[3] = {0.0f, 0.0f, 0.0f};
        if (inside) {
            uint32_t word[3][G + 1];
#pragma unroll
            for (int c = 0; c < 3; ++c)
#pragma unroll
                for (int g = 0; g <= G; ++g)
                    word[c][g] = __ldg(reinterpret_cast<const uint32_t*>(data + (at[c] & ~3u)) + g);
#pragma unroll
            for (int c = 0; c < 3; ++c) {
                const uint32_t shift = 8 * (at[c] & 3);
#pragma unroll
                for (int g = 0; g < G; ++g) {
                    const uint32_t v = __funnelshift_r(word[c][g], word[c][g + 1], shift);
                    across[c] = __fmaf_rn(byte_value<0>(v), w[4 * g], across[c]);
                    across[c] = __fmaf_rn(byte_value<1>(v), w[4 * g + 1], across[c]);
                    across[c] = __fmaf_rn(byte_value<2>(v), w[4 * g + 2], across[c]);
                    across[c] = __fmaf_rn(byte_value<3>(v), w[4 * g + 3], across[c]);
                }
            }
        } else {  // the image's last bytes: tap by tap, so nothing past it is read
            const float* wx = x_table.weights + size_t{x} * x_table.taps;
            for (int c = 0; c < 3; ++c)
                for (int j = 0; j < count; ++j) across[c] = __fmaf_rn(input_value(data[at[c] + j]), wx[j], across[c]);
        }
        float* o = out + size_t{y} * t.width * 3;
        for (int c = 0; c < 3; ++c) o[c] = across[c];
    }
}

// Whether the word-reading row pass's 32-bit offsets reach every byte of each image.
bool word_offsets_fit(const TensorView& source, uint32_t source_width, uint32_t source_height) {
    if (source.stride_y < 0 || source.stride_c < 0) return false;
    const uint64_t end = 2 * uint64_t(source.stride_c) + uint64_t(source_height - 1) * uint64_t(source.stride_y) +
                         source_width;
    return end + 64 < (uint64_t{1} << 31);
}

// The row pass with the rows staged in shared memory: a block is kStagedColumns output
// columns (a warp each) by 32 source rows (a lane each). The block copies the rows' input
// span into shared memory once, coalesced; each lane then walks its own row's taps of its
// warp's column, with the weights shared by the warp. Rows sit an odd number of words
// apart, so the 32 lanes' reads of one tap fall in 32 banks.
constexpr uint32_t kStagedColumns = 8;
constexpr uint32_t kStagedRows = 32;

// A staged row's pitch in elements (an odd number of 4-byte words) and the span's bound:
// the block's columns' centres are (kStagedColumns - 1) * scale apart, each reads
// +-support (rounded at both ends).
struct Staging {
    uint32_t span = 0, pitch = 0, taps = 0;
    size_t bytes = 0;
};

Staging staging_of(uint32_t source_width, uint32_t resized_width, size_t element_size) {
    const double scale = double(source_width) / double(resized_width);
    const double support = 2.0 * std::max(scale, 1.0);
    Staging s;
    s.span = std::min<uint32_t>(source_width, uint32_t(std::ceil((kStagedColumns - 1) * scale + 2.0 * support)) + 4);
    size_t words = (size_t{s.span} * element_size + 3) / 4;
    if (words % 2 == 0) ++words;
    s.pitch = uint32_t(words * 4 / element_size);
    s.taps = uint32_t(std::ceil(support)) * 2 + 2;
    s.bytes = size_t{3} * kStagedRows * s.pitch * element_size + size_t{kStagedColumns} * s.taps * sizeof(float);
    return s;
}

template <class In>
__global__ void rows_staged_kernel(TensorView source, const __grid_constant__ ImageList sources, uint32_t source_height,
                                   ResizeTarget t, SpanTable x_table, float* scratch, Staging staging) {
    extern __shared__ float shared[];
    float* weights = shared;                                                    // [kStagedColumns][staging.taps]
    In* rows = reinterpret_cast<In*>(weights + kStagedColumns * staging.taps);  // [3][kStagedRows][pitch]
    __shared__ int column_first[kStagedColumns], column_end[kStagedColumns];
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32, image = blockIdx.z;
    const uint32_t first_x = blockIdx.x * kStagedColumns, x = first_x + warp;
    const uint32_t columns = min(kStagedColumns, t.width - first_x);
    const bool column = x < t.width;
    int first = 0, count = 0;
    if (column) {
        first = x_table.first[x], count = x_table.count[x];
        const float* wx = x_table.weights + size_t{x} * x_table.taps;
        for (int j = int(lane); j < count; j += 32) weights[warp * staging.taps + j] = wx[j];
        if (lane == 0) column_first[warp] = first, column_end[warp] = first + count;
    }
    __syncthreads();
    // Spans are monotonic in x: the block reads [first of its first column, end of its last).
    const int lo = column_first[0], width = column_end[columns - 1] - lo;
    const uint32_t first_row = blockIdx.y * kStagedRows, row_count = min(kStagedRows, source_height - first_row);
    const In* data = static_cast<const In*>(image_data(source, sources, t.first_layer + image));
    // A warp copies whole rows, its lanes along each (coalesced where stride_x is 1).
    for (uint32_t c = 0; c < 3; ++c)
        for (uint32_t r = warp; r < row_count; r += kStagedColumns) {
            const In* from = data + int64_t(c) * source.stride_c + int64_t(first_row + r) * source.stride_y +
                             int64_t(lo) * source.stride_x;
            In* to = rows + (c * kStagedRows + r) * staging.pitch;
            for (int k = int(lane); k < width; k += 32) to[k] = from[int64_t(k) * source.stride_x];
        }
    __syncthreads();
    if (!column || lane >= row_count) return;
    const In* tap = rows + lane * staging.pitch + (first - lo);
    const float* w = weights + warp * staging.taps;
    const uint32_t plane = kStagedRows * staging.pitch;
    float across[3] = {0.0f, 0.0f, 0.0f};
#pragma unroll 4
    for (int j = 0; j < count; ++j)
        for (uint32_t c = 0; c < 3; ++c) across[c] += input_value(tap[c * plane + j]) * w[j];
    float* o = scratch + ((size_t{image} * source_height + first_row + lane) * t.width + x) * 3;
    for (int c = 0; c < 3; ++c) o[c] = across[c];
}

// Strong shrinks (8x and more across) take the staged pass where its shared memory fits:
// their many taps per column make the scattered global reads the cost. Milder ones read
// few taps and write much scratch, which the staged pass's per-row stores make dearer, so
// they, and spans too wide to stage, take the pass straight from global memory (8-bit rows
// read as words where they can be: rows_words_kernel).
template <class In>
void launch_rows(const TensorView& source, const ImageList& sources, uint32_t source_width, uint32_t source_height,
                 const ResizeTarget& t, const SpanTable& x_table, float* scratch, cudaStream_t stream) {
    constexpr size_t kMaxStaged = 160 * 1024;
    constexpr uint32_t kStagedShrink = 8;
    const Staging s = staging_of(source_width, t.resized_width, sizeof(In));
    if (source_width >= kStagedShrink * t.resized_width && s.bytes <= kMaxStaged) {
        if (s.bytes > 48 * 1024)
            TVLM_CUDA_CHECK(cudaFuncSetAttribute(rows_staged_kernel<In>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 int(s.bytes)));
        const dim3 grid((t.width + kStagedColumns - 1) / kStagedColumns,
                        (source_height + kStagedRows - 1) / kStagedRows, t.images);
        rows_staged_kernel<In>
            <<<grid, kStagedColumns * 32, s.bytes, stream>>>(source, sources, source_height, t, x_table, scratch, s);
        return;
    }
    const uint64_t columns = (t.width + kRowBlock - 1) / kRowBlock * kRowBlock;
    uint32_t rows_each = kMaxRowsEach;
    while (rows_each > 1 && columns * ((source_height + rows_each - 1) / rows_each) * t.images < kEnoughRowThreads)
        rows_each /= 2;
    while ((source_height + rows_each - 1) / rows_each > 65535) rows_each *= 2;  // the grid's height limit
    const dim3 grid(unsigned(columns / kRowBlock), (source_height + rows_each - 1) / rows_each, t.images);
    if constexpr (std::is_same_v<In, uint8_t>) {
        if (packed_bytes::reads_words(source, sources) && word_offsets_fit(source, source_width, source_height)) {
            // Where columns may read 6 taps or more: with fewer (mild bilinear shrinks, about 3
            // taps a column), padding them to a group of four costs more than the byte loads
            // it saves (docs/benchmarks.md, "Tried and dropped").
            constexpr uint32_t kLeastTaps = 6;
            const uint32_t groups = x_table.taps < kLeastTaps ? 0 : (x_table.taps + 3) / 4;
            const auto words = [&](auto kernel) {
                kernel<<<grid, kRowBlock, 0, stream>>>(source, sources, source_width, source_height, t, x_table,
                                                       scratch, rows_each);
            };
            if (groups == 2) return words(rows_words_kernel<2>);
            if (groups == 3) return words(rows_words_kernel<3>);
            if (groups == 4) return words(rows_words_kernel<4>);
            if (groups == 5) return words(rows_words_kernel<5>);
            if (groups == 6) return words(rows_words_kernel<6>);
            if (groups == 7) return words(rows_words_kernel<7>);
            if (groups == 8) return words(rows_words_kernel<8>);
        }
    }
    rows_kernel<In><<<grid, kRowBlock, 0, stream>>>(source, sources, source_height, t, x_table, scratch, rows_each);
}

template <class Out>
__global__ void columns_kernel(const float* scratch, uint32_t source_height, ResizeTarget t, SpanTable y_table,
                               Order o) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, image = blockIdx.y;
    if (i >= o.plane) return;
    const Place at = place(t, o, i);
    const int first = y_table.first[at.y], count = y_table.count[at.y];
    const float* wy_row = y_table.weights + size_t{at.y} * y_table.taps;
    const float* rows = scratch + (size_t{image} * source_height * t.width + at.x) * 3;
    float value[3] = {0.0f, 0.0f, 0.0f};
#pragma unroll 4
    for (int r = 0; r < count; ++r) {
        const float wy = wy_row[r];
        const float* across = rows + size_t(first + r) * t.width * 3;
        for (int c = 0; c < 3; ++c) value[c] += across[c] * wy;
    }
    write_pixel<Out>(t, image, at, value);
}

// columns_kernel for two vertically neighbouring pixels a thread (threads over the window,
// x fastest): their spans overlap, so each row of the union is loaded once for both. Each
// pixel adds its own rows' terms in ascending order, as columns_kernel does.
template <class Out>
__global__ void columns_pairs_kernel(const float* scratch, uint32_t source_height, ResizeTarget t, SpanTable y_table,
                                     Order o) {
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x, image = blockIdx.y;
    if (j >= t.width * ((t.height + 1) / 2)) return;
    uint32_t x;
    const uint32_t y = 2 * o.width.divmod(j, x);
    const bool two = y + 1 < t.height;
    const int first0 = y_table.first[y], count0 = y_table.count[y];
    const int first1 = two ? y_table.first[y + 1] : first0, count1 = two ? y_table.count[y + 1] : 0;
    const float* w0 = y_table.weights + size_t{y} * y_table.taps;
    const float* w1 = w0 + y_table.taps;
    const float* rows = scratch + (size_t{image} * source_height * t.width + x) * 3;
    float value0[3] = {0.0f, 0.0f, 0.0f}, value1[3] = {0.0f, 0.0f, 0.0f};
    const int lo = min(first0, first1), hi = max(first0 + count0, first1 + count1);
    for (int r = lo; r < hi; ++r) {
        const float* across = rows + size_t(r) * t.width * 3;
        const float a[3] = {across[0], across[1], across[2]};
        if (unsigned(r - first0) < unsigned(count0)) {
            const float wy = w0[r - first0];
            for (int c = 0; c < 3; ++c) value0[c] += a[c] * wy;
        }
        if (unsigned(r - first1) < unsigned(count1)) {
            const float wy = w1[r - first1];
            for (int c = 0; c < 3; ++c) value1[c] += a[c] * wy;
        }
    }
    write_pixel<Out>(t, image, place_at(t, o, x, y), value0);
    if (two) write_pixel<Out>(t, image, place_at(t, o, x, y + 1), value1);
}

// A resize of a uint8 image to its own size is the image: torch's weights there are 0 and
// 1 (the filter's zeros fall on whole pixels), so every sum is one term. A copy into the
// target's window, rounding, normalization and layout, one thread per output pixel.
template <class Out>
__global__ void identity_kernel(TensorView source, const __grid_constant__ ImageList sources, ResizeTarget t, Order o) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, image = blockIdx.y;
    if (i >= o.plane) return;
    const Place at = place(t, o, i);
    const int x = t.crop_x + int(at.x), y = t.crop_y + int(at.y);
    float value[3] = {0.0f, 0.0f, 0.0f};  // the zero padding, where the window reaches past the image
    if (x >= 0 && y >= 0 && x < int(t.resized_width) && y < int(t.resized_height)) {
        const uint8_t* pixel = static_cast<const uint8_t*>(image_data(source, sources, t.first_layer + image)) +
                               int64_t(y) * source.stride_y + int64_t(x) * source.stride_x;
        for (int c = 0; c < 3; ++c) value[c] = input_value(pixel[c * source.stride_c]);
    }
    write_pixel<Out>(t, image, at, value);
}

// The kernel for the target's output dtype.
template <template <class> class Kernel, class... Args>
void launch_for_dtype(const ResizeTarget& t, dim3 grid, cudaStream_t stream, Args... args) {
    with_output_type(t.out_dtype, [&](auto out) { Kernel<decltype(out)>::launch(grid, stream, args...); });
    TVLM_CUDA_CHECK(cudaGetLastError());
}

template <class Out>
struct TextureKernel {
    template <class... Args>
    static void launch(dim3 g, cudaStream_t s, Args... a) {
        texture_kernel<Out><<<g, kBlock, 0, s>>>(a...);
    }
};
template <class Out>
struct ColumnsKernel {
    template <class... Args>
    static void launch(dim3 g, cudaStream_t s, Args... a) {
        columns_kernel<Out><<<g, kBlock, 0, s>>>(a...);
    }
};

template <class Out>
struct ColumnsPairsKernel {
    template <class... Args>
    static void launch(dim3 g, cudaStream_t s, Args... a) {
        columns_pairs_kernel<Out><<<g, kBlock, 0, s>>>(a...);
    }
};

template <class Out>
struct IdentityKernel {
    template <class... Args>
    static void launch(dim3 g, cudaStream_t s, Args... a) {
        identity_kernel<Out><<<g, kBlock, 0, s>>>(a...);
    }
};

dim3 grid_of(const ResizeTarget& t) {
    return dim3(unsigned((uint64_t(t.width) * t.height + kBlock - 1) / kBlock), t.images);
}

}  // namespace

void check_resize_target(const ResizeTarget& t) {
    const auto size = [](uint32_t w, uint32_t h) { return std::to_string(w) + "x" + std::to_string(h); };
    if (t.images == 0 || t.images > 65535)
        throw Error("a resize covers 1 to 65535 images, not " + std::to_string(t.images));
    if (t.width == 0 || t.height == 0 || t.width > INT32_MAX || t.height > INT32_MAX ||
        int64_t{t.crop_x} + t.width <= 0 || int64_t{t.crop_y} + t.height <= 0 ||
        int64_t{t.crop_x} >= int64_t{t.resized_width} || int64_t{t.crop_y} >= int64_t{t.resized_height})
        throw Error("the window " + size(t.width, t.height) + " at (" + std::to_string(t.crop_x) + ", " +
                    std::to_string(t.crop_y) + ") is empty or misses the resized " +
                    size(t.resized_width, t.resized_height) + " image");
    if (t.layout == ResizeLayout::merged_patches) {
        const uint32_t cell = t.patch_size * t.merge_size;
        if (cell == 0 || t.width % cell || t.height % cell)
            throw Error("merged patches need a window whose sides are multiples of patch_size * merge_size (" +
                        std::to_string(cell) + "), not " + size(t.width, t.height));
        if (t.times == 0 || t.first_time + t.times > t.temporal_patch_size)
            throw Error("time slots " + std::to_string(t.first_time) + ".." + std::to_string(t.first_time + t.times) +
                        " do not fit temporal_patch_size " + std::to_string(t.temporal_patch_size));
    } else if (t.times != 1 || t.first_time != 0) {
        throw Error("planar and tiled outputs have one time slot");
    }
    if (t.layout == ResizeLayout::tiles &&
        (t.tile_width == 0 || t.tile_height == 0 || t.width % t.tile_width || t.height % t.tile_height))
        throw Error("tiles of " + size(t.tile_width, t.tile_height) + " do not cut the window " +
                    size(t.width, t.height) + " into whole tiles");
    const uint64_t slots = t.layout == ResizeLayout::merged_patches ? t.temporal_patch_size : 1;
    if (uint64_t{3} * t.width * t.height * slots > UINT32_MAX)
        throw Error("one image's output of " + size(t.width, t.height) + " exceeds 2^32 values: resize to less");
    if (t.out_dtype == TensorDtype::u8 &&
        !(t.round_to_byte && t.multiply == 1.0f && t.subtract[0] == 0.0f && t.subtract[1] == 0.0f &&
          t.subtract[2] == 0.0f && t.divide[0] == 1.0f && t.divide[1] == 1.0f && t.divide[2] == 1.0f))
        throw Error(
            "uint8 outputs are the resized image itself: set round_to_byte, multiply 1, subtract 0 and "
            "divide 1 (normalized outputs are float32, float16 or bfloat16)");
    if (!t.out) throw Error("the resize has no output buffer (a null pointer)");
}

void resize_from_texture(cudaTextureObject_t texture, bool layered, uint32_t source_width, uint32_t source_height,
                         float texel_scale, const ResizeTarget& target, cudaStream_t stream) {
    check_resize_target(target);
    if (source_width == 0 || source_height == 0) throw Error("the source texture is empty");
    launch_for_dtype<TextureKernel>(target, grid_of(target), stream, texture, layered, texel_scale, target,
                                    order_of(target));
}

namespace {

// A uint8 image resized to its own size (identity_kernel): no tables, no passes.
bool identity_resize(TensorDtype dtype, uint32_t source_width, uint32_t source_height, const ResizeTarget& t) {
    return dtype == TensorDtype::u8 && source_width == t.resized_width && source_height == t.resized_height;
}

}  // namespace

size_t software_tables_bytes(uint32_t source_width, uint32_t source_height, const ResizeTarget& target,
                             SoftwareFilter filter) {
    return table_bytes(target.width, max_taps(source_width, target.resized_width, filter)) +
           table_bytes(target.height, max_taps(source_height, target.resized_height, filter));
}

size_t software_rows_bytes(uint32_t source_width, uint32_t source_height, const ResizeTarget& target,
                           SoftwareFilter filter, TensorDtype source_dtype) {
    if (identity_resize(source_dtype, source_width, source_height, target)) return 0;  // nothing between passes
    if (fused_resize_fits(source_dtype, source_width, source_height, target, filter)) return 0;
    return size_t{target.images} * source_height * target.width * 3 * sizeof(float);
}

void resize_software(const TensorView& source, uint32_t source_width, uint32_t source_height,
                     const ResizeTarget& target, SoftwareFilter filter, const SoftwareScratch& scratch,
                     cudaStream_t stream, const ImageList& sources) {
    check_resize_target(target);
    if (source_width == 0 || source_height == 0 || (!sources.count && !source.data))
        throw Error("the source image is empty");
    if (sources.count && uint64_t{target.first_layer} + target.images > sources.count)
        throw Error("a resize of " + std::to_string(target.images) + " images from a list of " +
                    std::to_string(sources.count));
    if (source.channels < 3) throw Error("the source image needs 3 channels (RGB)");
    if (identity_resize(source.dtype, source_width, source_height, target)) {
        launch_for_dtype<IdentityKernel>(target, grid_of(target), stream, source, sources, target, order_of(target));
        return;
    }
    // The fused kernel needs no rows between passes (software_rows_bytes() is 0 for it).
    const bool fused = fused_resize_fits(source.dtype, source_width, source_height, target, filter);
    if (!scratch.tables || (!fused && !scratch.rows))
        throw Error(
            "the software resize has no scratch buffer (a null pointer): give it software_tables_bytes() "
            "and software_rows_bytes() of device memory");
    const SpanTable x_table = table_at(scratch.tables, target.width,
                                       max_taps(source_width, target.resized_width, filter));
    const SpanTable y_table = table_at(scratch.tables + table_bytes(target.width, x_table.taps), target.height,
                                       max_taps(source_height, target.resized_height, filter));
    if (!scratch.tables_written) {
        const dim3 grid((std::max(target.width, target.height) + kBlock - 1) / kBlock, 2);
        span_table_kernel<<<grid, kBlock, 0, stream>>>(target, source_width, source_height, filter, x_table, y_table);
        TVLM_CUDA_CHECK(cudaGetLastError());
    }
    if (fused) {
        resize_fused(source, sources, source_width, source_height, target, filter, x_table, y_table, stream);
        return;
    }
    float* rows = scratch.rows;
    switch (source.dtype) {
        case TensorDtype::u8:
            launch_rows<uint8_t>(source, sources, source_width, source_height, target, x_table, rows, stream);
            break;
        case TensorDtype::f16:
            launch_rows<__half>(source, sources, source_width, source_height, target, x_table, rows, stream);
            break;
        case TensorDtype::bf16:
            launch_rows<__nv_bfloat16>(source, sources, source_width, source_height, target, x_table, rows, stream);
            break;
        case TensorDtype::f32:
            launch_rows<float>(source, sources, source_width, source_height, target, x_table, rows, stream);
            break;
    }
    TVLM_CUDA_CHECK(cudaGetLastError());
    // Planar and tiled outputs take two rows a thread where that still leaves a large grid;
    // merged patches keep the output order, whose stores are contiguous (their window order's
    // are runs of patch_size), as do small grids, whose halved threads cost more than the loads saved.
    constexpr uint64_t kEnoughPairs = uint64_t{1} << 17;
    const uint64_t pairs_wanted = uint64_t(target.width) * ((target.height + 1) / 2) * target.images;
    if (target.layout != ResizeLayout::merged_patches && pairs_wanted >= kEnoughPairs) {
        const dim3 pairs(unsigned((uint64_t(target.width) * ((target.height + 1) / 2) + kBlock - 1) / kBlock),
                         target.images);
        launch_for_dtype<ColumnsPairsKernel>(target, pairs, stream, static_cast<const float*>(rows), source_height,
                                             target, y_table, order_of(target));
        return;
    }
    launch_for_dtype<ColumnsKernel>(target, grid_of(target), stream, static_cast<const float*>(rows), source_height,
                                    target, y_table, order_of(target));
}

}  // namespace tvlm
