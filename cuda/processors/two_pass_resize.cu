// The two passes (two_pass_resize.h): pass 1 filters each source row across (the window's
// columns) into float scratch [image][source row][window column][channel]; pass 2 filters
// each output pixel's column of row results. Each term is torch's own term in torch's
// order (taps ascending, rows first), so the values equal the 2-D sum bit for bit, at a
// fraction of its work (a 4096^2 -> 224^2 shrink reads 73 taps a side: 73 + 73, not 73^2).
#include "cuda/processors/two_pass_resize.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <type_traits>

#include "cuda/cuda_check.h"
#include "cuda/cuda_devices.h"
#include "cuda/processors/packed_bytes.cuh"
#include "cuda/processors/resize_output.cuh"
#include "cuda/processors/row_taps.cuh"
#include "cuda/tensors/tensor_elements.cuh"

namespace tvlm {

namespace {

using namespace resize_output;
using resize_spans::SpanTable;
using namespace row_taps;

constexpr int kRowBlock = 64;         // pass 1: window columns per block
constexpr uint32_t kMaxRowsEach = 8;  // pass 1: source rows per thread, where there are rows enough
// Pass 1's threads wanted before a thread takes several rows (its span and weights are read
// once for them): a few waves of a large GPU. Fewer rows each below it, down to one: a
// small image's pass is otherwise a few long chains of dependent loads per thread.
constexpr uint64_t kEnoughRowThreads = uint64_t{1} << 20;

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
        float across[3];
        across_elements(first_column + int64_t(y) * source.stride_y, step, channel, wx, count, across);
        float* o = out + size_t{y} * t.width * 3;
        for (int c = 0; c < 3; ++c) o[c] = across[c];
    }
}

// The row pass for 8-bit images read as words (row_taps::across_taps): T taps a column, a
// word load per four, where rows_kernel loads a byte and a weight per tap. T covers every
// span but those float rounding makes longer (resize_spans::span_taps), which, like the
// rows whose words would reach past the image's last byte, take the table's count byte by
// byte. Offsets are 32-bit (word_offsets_fit).
template <int T>
__global__ void rows_words_kernel(TensorView source, const __grid_constant__ ImageList sources, uint32_t source_width,
                                  uint32_t source_height, ResizeTarget t, SpanTable x_table, float* scratch,
                                  uint32_t rows_each) {
    const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, image = blockIdx.z;
    if (x >= t.width) return;
    const int first = x_table.first[x], count = x_table.count[x];
    const float* wx = x_table.weights + size_t{x} * x_table.taps;
    const unsigned char* data = static_cast<const unsigned char*>(image_data(source, sources, t.first_layer + image));
    const uint32_t stride_y = uint32_t(source.stride_y), stride_c = uint32_t(source.stride_c);
    const uint32_t first_row = blockIdx.y * rows_each, end_row = min(source_height, first_row + rows_each);
    float* out = scratch + (size_t{image} * source_height * t.width + x) * 3;
    const bool fixed = count <= T && end_row > first_row &&
                       across_taps_fit<T>((end_row - 1) * stride_y + uint32_t(first), stride_c,
                                          words_end(stride_c, stride_y, source_width, source_height));
    if (fixed) {
        float w[T];
        tap_weights<T>(wx, count, w);
        for (uint32_t y = first_row; y < end_row; ++y) {
            float across[3];
            across_taps<T>(data, y * stride_y + uint32_t(first), stride_c, w, across);
            float* o = out + size_t{y} * t.width * 3;
            for (int c = 0; c < 3; ++c) o[c] = across[c];
        }
    } else {
        for (uint32_t y = first_row; y < end_row; ++y) {
            float across[3];
            across_bytes(data, y * stride_y + uint32_t(first), stride_c, wx, count, across);
            float* o = out + size_t{y} * t.width * 3;
            for (int c = 0; c < 3; ++c) o[c] = across[c];
        }
    }
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

// Columns read as words up to kMostWordTaps taps (48: shrinks up to about 12x bicubic);
// more weights than that no longer fit a thread's registers.
constexpr uint32_t kMostWordTaps = 48;
// Fewer taps are cheaper byte by byte: with about 3 a column (mild bilinear shrinks), padding
// them to a group of four costs more than the byte loads it saves (docs/benchmarks.md,
// "Tried and dropped").
constexpr uint32_t kLeastWordTaps = 6;

// The taps rows_words_kernel's loops take for a table `table_taps` wide (max_taps: span_taps
// + 2): span_taps rounded up to a whole word of taps. Whole words rather than the span's own
// count: the loop at 18 taps was slower than at 20 for Qwen2-VL's 4096² shrink
// (docs/benchmarks.md, "Tried and dropped").
constexpr uint32_t word_taps(uint32_t table_taps) { return (table_taps - 2 + 3) / 4 * 4; }

// Source rows per thread of the row pass: up to kMaxRowsEach (a thread loads its column's
// span and weights once for them), fewer where the grid would be too small to fill the GPU.
uint32_t row_pass_rows_each(const ResizeTarget& t, uint32_t source_height) {
    const uint64_t columns = (t.width + kRowBlock - 1) / kRowBlock * kRowBlock;
    uint32_t rows_each = kMaxRowsEach;
    while (rows_each > 1 && columns * ((source_height + rows_each - 1) / rows_each) * t.images < kEnoughRowThreads)
        rows_each /= 2;
    while ((source_height + rows_each - 1) / rows_each > 65535) rows_each *= 2;  // the grid's height limit
    return rows_each;
}

// 8-bit rows read as words where they can be (rows_words_kernel); else strong shrinks (8x
// and more across) take the staged pass where its shared memory fits: their many taps per
// column make scattered byte reads the cost. The rest read element by element. Words beat
// the staged pass on every shrink both take (docs/benchmarks.md).
template <class In>
void launch_rows(const TensorView& source, const ImageList& sources, uint32_t source_width, uint32_t source_height,
                 const ResizeTarget& t, const SpanTable& x_table, float* scratch, cudaStream_t stream) {
    const uint32_t rows_each = row_pass_rows_each(t, source_height);
    const dim3 grid(unsigned((t.width + kRowBlock - 1) / kRowBlock), (source_height + rows_each - 1) / rows_each,
                    t.images);
    if constexpr (std::is_same_v<In, uint8_t>) {
        const uint32_t taps = word_taps(x_table.taps);
        if (x_table.taps >= kLeastWordTaps && taps <= kMostWordTaps && packed_bytes::reads_words(source, sources) &&
            word_offsets_fit(source, source_width, source_height)) {
            const auto words = [&](auto kernel) {
                kernel<<<grid, kRowBlock, 0, stream>>>(source, sources, source_width, source_height, t, x_table,
                                                       scratch, rows_each);
            };
            // A kernel for each whole word of taps up to kMostWordTaps.
            if (with_count<1, int(kMostWordTaps / 4)>(
                    int(taps / 4), [&](auto taps_words) { words(rows_words_kernel<4 * decltype(taps_words)::value>); }))
                return;
        }
    }
    constexpr size_t kMaxStaged = 160 * 1024;
    constexpr uint32_t kStagedShrink = 8;
    const Staging s = staging_of(source_width, t.resized_width, sizeof(In));
    if (source_width >= kStagedShrink * t.resized_width && s.bytes <= kMaxStaged) {
        // The most any staging takes, not this launch's bytes: with its own static shared
        // memory, a launch of a little under 48 KB would otherwise be refused.
        allow_dynamic_shared(reinterpret_cast<const void*>(rows_staged_kernel<In>), kMaxStaged);
        const dim3 staged((t.width + kStagedColumns - 1) / kStagedColumns,
                          (source_height + kStagedRows - 1) / kStagedRows, t.images);
        rows_staged_kernel<In>
            <<<staged, kStagedColumns * 32, s.bytes, stream>>>(source, sources, source_height, t, x_table, scratch, s);
        return;
    }
    rows_kernel<In><<<grid, kRowBlock, 0, stream>>>(source, sources, source_height, t, x_table, scratch, rows_each);
}

// A pixel's rows, kColumnBatch at a time (columns_kernel<Out, true>): its terms are one
// chain per channel, so where the window is small (few threads, many taps: one image to
// 224^2) the rows' loads bound it. A batch's loads are issued before the terms of the batch
// before it are added, in order.
constexpr int kColumnBatch = 8;

struct ColumnBatch {
    float a[kColumnBatch][3];
    float w[kColumnBatch];
};

__device__ __forceinline__ void load_batch(ColumnBatch& b, const float* rows, const float* wy, size_t row_step, int r,
                                           int count) {
#pragma unroll
    for (int k = 0; k < kColumnBatch; ++k) {
        const bool in = r + k < count;
        const float* across = rows + size_t(r + k) * row_step;
        for (int c = 0; c < 3; ++c) b.a[k][c] = in ? across[c] : 0.0f;
        b.w[k] = in ? wy[r + k] : 0.0f;
    }
}

template <class Out, bool Batched>
__global__ void columns_kernel(const float* scratch, uint32_t source_height, ResizeTarget t, SpanTable y_table,
                               Order o) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, image = blockIdx.y;
    if (i >= o.plane) return;
    const Place at = place(t, o, i);
    const int first = y_table.first[at.y], count = y_table.count[at.y];
    const float* wy_row = y_table.weights + size_t{at.y} * y_table.taps;
    const float* rows = scratch + (size_t{image} * source_height * t.width + at.x) * 3;
    float value[3] = {0.0f, 0.0f, 0.0f};
    if constexpr (Batched) {
        const size_t step = size_t{t.width} * 3;
        const float* from = rows + size_t(first) * step;
        ColumnBatch now;
        load_batch(now, from, wy_row, step, 0, count);
        for (int r = 0; r < count; r += kColumnBatch) {
            ColumnBatch next;
            if (r + kColumnBatch < count) load_batch(next, from, wy_row, step, r + kColumnBatch, count);
            const int n = min(kColumnBatch, count - r);
#pragma unroll
            for (int k = 0; k < kColumnBatch; ++k)
                if (k < n)
                    for (int c = 0; c < 3; ++c) value[c] += now.a[k][c] * now.w[k];
            now = next;
        }
    } else {
#pragma unroll 4
        for (int r = 0; r < count; ++r) {
            const float wy = wy_row[r];
            const float* across = rows + size_t(first + r) * t.width * 3;
            for (int c = 0; c < 3; ++c) value[c] += across[c] * wy;
        }
    }
    write_pixel<Out>(t, o, image, at, value);
}

// columns_kernel for two vertically neighbouring pixels a thread (threads over the window,
// x fastest): their spans overlap, so each row of the union is loaded once for both. Each
// pixel adds its own rows' terms in ascending order, as columns_kernel does. A row of the
// zero padding reads nothing (its span sits at the image's edge), so it leaves the union as
// its neighbour's.
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
    const int lo = count0 && count1 ? min(first0, first1) : count0 ? first0 : first1;
    const int hi = max(count0 ? first0 + count0 : 0, count1 ? first1 + count1 : 0);
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
    write_pixel<Out>(t, o, image, place_at(t, o, x, y), value0);
    if (two) write_pixel<Out>(t, o, image, place_at(t, o, x, y + 1), value1);
}


}  // namespace

bool two_pass_words_preferred(uint32_t source_width, uint32_t source_height, const ResizeTarget& target,
                              SoftwareFilter filter) {
    constexpr uint32_t kLeastRowsEach = 4;
    const uint32_t taps = resize_spans::max_taps(source_width, target.resized_width, filter);
    return filter == SoftwareFilter::bicubic && taps >= kLeastWordTaps && word_taps(taps) <= kMostWordTaps &&
           row_pass_rows_each(target, source_height) >= kLeastRowsEach;
}

void resize_two_pass(const TensorView& source, const ImageList& sources, uint32_t source_width, uint32_t source_height,
                     const ResizeTarget& target, const SpanTable& x_table, const SpanTable& y_table, float* rows,
                     cudaStream_t stream) {
    with_element_type(source.dtype, [&](auto in) {
        launch_rows<decltype(in)>(source, sources, source_width, source_height, target, x_table, rows, stream);
    });
    TVLM_CUDA_CHECK(cudaGetLastError());
    resize_columns(rows, source_height, target, y_table, stream);
}

void resize_columns(const float* rows, uint32_t source_height, const ResizeTarget& target, const SpanTable& y_table,
                    cudaStream_t stream) {
    // Planar and tiled outputs take two rows a thread where that still leaves a large grid;
    // merged patches keep the output order, whose stores are contiguous (their window order's
    // are runs of patch_size), as do small grids, whose halved threads cost more than the loads saved.
    constexpr uint64_t kEnoughPairs = uint64_t{1} << 17;
    const uint64_t pairs_per_image = uint64_t(target.width) * ((target.height + 1) / 2);
    if (target.layout != ResizeLayout::merged_patches && pairs_per_image * target.images >= kEnoughPairs) {
        const dim3 pairs(unsigned((pairs_per_image + kBlock - 1) / kBlock), target.images);
        launch_for_output(target, [&](auto out) {
            columns_pairs_kernel<decltype(out)>
                <<<pairs, kBlock, 0, stream>>>(rows, source_height, target, y_table, order_of(target));
        });
        return;
    }
    // Batched loads where the grid is small and each thread's chain of loads is the cost; a
    // large grid's many threads hide those loads already, and there the batches' registers
    // and instructions cost more than they save (Qwen2-VL's merged patches from 4096^2).
    constexpr uint64_t kFewPixels = uint64_t{1} << 17;
    const bool batched = uint64_t{target.width} * target.height * target.images < kFewPixels;
    launch_for_output(target, [&](auto out) {
        if (batched)
            columns_kernel<decltype(out), true>
                <<<grid_of(target), kBlock, 0, stream>>>(rows, source_height, target, y_table, order_of(target));
        else
            columns_kernel<decltype(out), false>
                <<<grid_of(target), kBlock, 0, stream>>>(rows, source_height, target, y_table, order_of(target));
    });
}

}  // namespace tvlm
