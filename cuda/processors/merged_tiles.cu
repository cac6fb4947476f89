// Merged patches (Qwen2-VL's layout) from mild resizes and bicubic shrinks by up to 4x, a
// tile of whole patches a block: tiled_resize.cu's two phases (the tile's source rows
// filtered across into shared memory, then down each output pixel's column from there),
// with the tap counts fixed at compile time. Each axis reads T = ceil(2 * support) taps, the
// most any span holds (floor(a + 2s) - floor(a) <= ceil(2s)), rounded up to even above 8;
// a span that float rounding makes longer takes the table's loop. Shrinks filter the rows
// two tiles share twice, which costs less than storing and loading every filtered row once
// (the two passes) up to about 4x.
// The weights past a span's count are zeros, which add +0 after its last term, so the sums
// are the table loops' (and torch's) floats. What the loops no longer do is the work: a
// thread's row reads only the words its T taps lie in, one bounds test covers all its
// rows, and each output pixel's rows and weights come from shared memory, staged once per
// tile row, in an unrolled loop of T taps, two pixels a thread where the stores allow.
#include <cmath>
#include <type_traits>

#include "cuda/cuda_check.h"
#include "cuda/cuda_devices.h"
#include "cuda/processors/packed_bytes.cuh"
#include "cuda/processors/resize_output.cuh"
#include "cuda/processors/row_taps.cuh"
#include "cuda/processors/tile_source_rows.cuh"
#include "cuda/processors/tiled_resize.h"
#include "cuda/tensors/element_pairs.cuh"
#include "cuda/tensors/tensor_elements.cuh"
#include "engine/error.h"

namespace tvlm {

namespace {

using namespace resize_output;
using namespace row_taps;
using resize_spans::SpanTable;
using tiles::kMaxShared;
using tiles::kThreads;
using tiles::kTileColumns;

constexpr uint32_t kMaxTileRows = 2 * kTileColumns;     // two patches of up to kTileColumns
constexpr uint32_t kMaxTilePatches = 2 * kTileColumns;  // two rows of kTileColumns / patch_size
constexpr int kMaxMildTaps = 8;                         // a bicubic shrink by 2x: ceil(2 * 4)
// Stronger shrinks: even tap counts up to kMaxTaps (a bicubic shrink by 4x), in tiles of up to
// kMaxShrinkTileRows rows, where each row's weights take more room.
constexpr int kMaxTaps = 16;
constexpr uint32_t kMaxShrinkTileRows = kTileColumns;

// A tile's patch: where its pixel 0 goes in the image's output (~0u: past the window) and
// its first column and row in the tile.
struct alignas(16) TilePatch {
    uint32_t offset, column, row, unused;
};

// U pixels' three channels of one filtered row (U = 2: six floats from an 8-byte boundary)
// times w, added to their sums.
template <uint32_t U>
__device__ __forceinline__ void add_row(const float* from, float w, float (&value)[U][3]) {
    float v[3 * U];
    if constexpr (U == 2) {
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            const float2 pair = reinterpret_cast<const float2*>(from)[k];
            v[2 * k] = pair.x, v[2 * k + 1] = pair.y;
        }
    } else {
        v[0] = from[0], v[1] = from[1], v[2] = from[2];
    }
#pragma unroll
    for (uint32_t u = 0; u < U; ++u)
#pragma unroll
        for (int c = 0; c < 3; ++c) value[u][c] = __fmaf_rn(v[3 * u + c], w, value[u][c]);
}

// U consecutive outputs of each channel and time slot from `offset` (resize_output's
// write_pixel for U pixels at once; U = 2: one store, offset even).
template <class Out, uint32_t U>
__device__ __forceinline__ void write_pixels(const ResizeTarget& t, const Order& o, uint32_t image, uint32_t offset,
                                             uint32_t channel_stride, uint32_t time_stride,
                                             const float (&value)[U][3]) {
    Out* out = static_cast<Out*>(t.out) + image * t.image_stride + offset + t.first_time * time_stride;
#pragma unroll
    for (int c = 0; c < 3; ++c) {
        Out v[U];
#pragma unroll
        for (uint32_t u = 0; u < U; ++u) v[u] = output_value<Out>(t, o, c, value[u][c]);
        const auto store = [&](Out* to) {
            if constexpr (U == 2) {
                using Pair = typename PairOf<Out>::type;
                Pair pair;
                reinterpret_cast<Out*>(&pair)[0] = v[0], reinterpret_cast<Out*>(&pair)[1] = v[1];
                *reinterpret_cast<Pair*>(to) = pair;
            } else {
                to[0] = v[0];
            }
        };
        Out* to = out + c * channel_stride;
        store(to);
        if (t.times == 2) {  // Qwen2-VL's two time copies of an image
            store(to + time_stride);
        } else {
#pragma unroll 1
            for (uint32_t k = 1; k < t.times; ++k) store(to + k * time_stride);
        }
    }
}

// T > 0: rows read as words, T taps a span (spans longer than T, and rows near the image's
// last byte, take the table's loop); T == 0: every span from the table, element by element.
// `pitch` floats a filtered row: 3 * kTileColumns plus 3 * patch_size's remainder mod 32
// banks, so that a warp's pixels on consecutive output rows (one source row apart) read
// from different banks. `pairs`: each thread sums and stores two pixels of a patch row
// (even patch sizes, an output whose pairs are aligned to two values), so that the index
// work, the row's weights, the normalization's setup and each store are shared by two.
template <class Out, int T>
__global__ void __launch_bounds__(kThreads)
    merged_tiles_kernel(TensorView source, const __grid_constant__ ImageList sources, uint32_t source_width,
                        uint32_t source_height, ResizeTarget t, Order o, SpanTable x_table, SpanTable y_table,
                        uint32_t tile_rows, uint32_t tile_columns, FastDivmod tile_patches, uint32_t pitch,
                        bool pairs) {
    constexpr int kSlots = T > 4 ? (T + 3) / 4 * 4 : 4;  // a row's weights as float4s, zeros past its count
    constexpr uint32_t kRows = T > kMaxMildTaps ? kMaxShrinkTileRows : kMaxTileRows;
    extern __shared__ float across_rows[];  // [source row - lo][column][3], pitch floats a row
    __shared__ int rows_first, rows_end;
    __shared__ int2 row_spans[kMaxTileRows];  // (first, count) of each tile row
    __shared__ __align__(16) float row_weights[kRows][kSlots];
    __shared__ TilePatch patches[kMaxTilePatches];

    const uint32_t p = t.patch_size, m = t.merge_size, area = o.area.divisor;
    const uint32_t times_area = t.temporal_patch_size * area;
    const uint32_t first_x = blockIdx.x * tile_columns, first_y = blockIdx.y * tile_rows, image = blockIdx.z;
    const uint32_t rows = min(t.height, first_y + tile_rows) - first_y;
    const uint32_t tile_patch_count = tile_patches.divisor * (rows / p);

    // The tile rows' spans and weights, its patches' places, and the union of the rows' spans.
    for (uint32_t r = threadIdx.x; r < rows; r += kThreads) {
        const uint32_t y = first_y + r;
        const int count = y_table.count[y];
        row_spans[r] = make_int2(y_table.first[y], count);
        const float* wy = y_table.weights + size_t{y} * y_table.taps;
#pragma unroll
        for (int j = 0; j < kSlots; ++j) row_weights[r][j] = j < T && j < count ? wy[j] : 0.0f;
    }
    for (uint32_t n = threadIdx.x; n < tile_patch_count; n += kThreads) {
        uint32_t patch_x, within_x, within_y;
        const uint32_t patch_y = tile_patches.divmod(n, patch_x);
        const uint32_t column = patch_x * p, row = patch_y * p;
        const uint32_t group_x = o.merge.divmod(blockIdx.x * tile_patches.divisor + patch_x, within_x);
        const uint32_t group_y = o.merge.divmod(first_y / p + patch_y, within_y);
        const uint32_t patch = (group_y * o.groups_wide.divisor + group_x) * m * m + within_y * m + within_x;
        patches[n] = {first_x + column < t.width ? patch * 3 * times_area : ~0u, column, row, 0};
    }
    if (threadIdx.x < 32) tiles::find_tile_source_rows(y_table, first_y, first_y + rows, rows_first, rows_end);
    __syncthreads();
    const int lo = rows_first, hi = rows_end;

    // Across: a thread per tile column, rows spread over the row groups (as many whole groups
    // of tile_columns threads as the block holds: the rest, a warp where patches are 14 wide,
    // only stage); then T rows of zeros after the last, which the fixed loops below read with
    // zero weights.
    const uint32_t groups = kThreads / tile_columns;
    const uint32_t column = threadIdx.x % tile_columns, group = threadIdx.x / tile_columns;
    const uint32_t x = first_x + column;
    if (group < groups && x < t.width) {
        const int first = x_table.first[x], count = x_table.count[x];
        const float* wx = x_table.weights + size_t{x} * x_table.taps;
        const void* data = image_data(source, sources, t.first_layer + image);
        float* to = across_rows + size_t{column} * 3;
        const uint32_t stride_y = uint32_t(source.stride_y), stride_c = uint32_t(source.stride_c);
        const bool fixed = T > 0 && count <= T && hi > lo &&
                           across_taps_fit<T>(uint32_t(hi - 1) * stride_y + uint32_t(first), stride_c,
                                              words_end(stride_c, stride_y, source_width, source_height));
        if constexpr (T > 0) {
            if (fixed) {
                float w[T];
                tap_weights<T>(wx, count, w);
                for (int r = lo + int(group); r < hi; r += int(groups)) {
                    float across[3];
                    across_taps<T>(static_cast<const unsigned char*>(data), uint32_t(r) * stride_y + uint32_t(first),
                                   stride_c, w, across);
                    float* s = to + size_t(r - lo) * pitch;
                    s[0] = across[0], s[1] = across[1], s[2] = across[2];
                }
            }
        }
        if (!fixed) {
            const uint8_t* first_column = static_cast<const uint8_t*>(data) + int64_t(first) * source.stride_x;
            const int64_t channel[3] = {0, source.stride_c, 2 * source.stride_c};
            for (int r = lo + int(group); r < hi; r += int(groups)) {
                float across[3];
                across_elements(first_column + int64_t(r) * source.stride_y, source.stride_x, channel, wx, count,
                                across);
                float* s = to + size_t(r - lo) * pitch;
                s[0] = across[0], s[1] = across[1], s[2] = across[2];
            }
        }
    }
    for (uint32_t i = threadIdx.x; i < T * pitch; i += kThreads) across_rows[size_t(hi - lo) * pitch + i] = 0.0f;
    __syncthreads();

    // Down: the tile's pixels in the output's order, patch after patch, so that a warp's
    // stores of one channel and time are one run; U pixels of a patch row a thread.
    const auto down = [&](auto pixels) {
        constexpr uint32_t U = decltype(pixels)::value;
        // Pixel U * threadIdx.x, then every U * kThreads: its patch n and place s in the
        // patch (row sy, column sx), each step added to the last with carries.
        uint32_t s, sx, step_s, step_sx;
        uint32_t n = o.area.divmod(U * threadIdx.x, s), sy = o.patch.divmod(s, sx);
        const uint32_t step_n = o.area.divmod(U * kThreads, step_s), step_sy = o.patch.divmod(step_s, step_sx);
        for (; n < tile_patch_count; n += step_n, s += step_s, sx += step_sx, sy += step_sy) {
            if (sx >= p) sx -= p, ++sy;  // the step's carries
            if (s >= area) s -= area, sy -= p, ++n;
            if (n >= tile_patch_count) break;
            const TilePatch at = patches[n];
            if (at.offset == ~0u) continue;  // the last tile column's patches past the window
            const uint32_t column = at.column + sx, row = at.row + sy;
            const int2 span = row_spans[row];
            float value[U][3] = {};
            if (span.y <= T) {
                const float* from = across_rows + (span.y ? span.x - lo : 0) * int(pitch) + column * 3;
                float w[kSlots];
#pragma unroll
                for (int q = 0; q < kSlots / 4; ++q) {
                    const float4 v = reinterpret_cast<const float4*>(row_weights[row])[q];
                    w[4 * q] = v.x, w[4 * q + 1] = v.y, w[4 * q + 2] = v.z, w[4 * q + 3] = v.w;
                }
#pragma unroll
                for (int r = 0; r < T; ++r) add_row<U>(from + r * pitch, w[r], value);
            } else {
                const float* wy = y_table.weights + size_t{first_y + row} * y_table.taps;
                const float* from = across_rows + (span.x - lo) * int(pitch) + column * 3;
#pragma unroll 1  // rare (float rounding): kept small
                for (int r = 0; r < span.y; ++r) add_row<U>(from + r * pitch, wy[r], value);
            }
            write_pixels<Out, U>(t, o, image, at.offset + s, times_area, area, value);
        }
    };
    if (pairs) down(std::integral_constant<uint32_t, 2>{});
    else down(std::integral_constant<uint32_t, 1>{});
}

// The taps the kernel's fixed loops take on both axes (resize_spans::span_taps, the larger
// of the two; above kMaxMildTaps rounded up to even, the instances there are), or 0 where
// they are more than kMaxTaps.
int fixed_taps(uint32_t source_width, uint32_t source_height, const ResizeTarget& t, SoftwareFilter filter) {
    const uint32_t most = std::max(resize_spans::span_taps(source_width, t.resized_width, filter),
                                   resize_spans::span_taps(source_height, t.resized_height, filter));
    if (most < 2 || most > uint32_t(kMaxTaps)) return 0;
    return most <= uint32_t(kMaxMildTaps) ? int(most) : int((most + 1) / 2 * 2);
}

// A filtered row's floats in shared memory: the tile's columns rounded up to 32 banks, plus
// 3 * patch_size's remainder, so that a warp's pixels on consecutive output rows (one source
// row apart where the resize is mild) read from different banks.
uint32_t pitch_of(uint32_t tile_columns, uint32_t patch_size) {
    return (3 * tile_columns + 31) / 32 * 32 + (3 * patch_size) % 32;
}

// The dynamic shared memory of a tile: its source rows and `taps` rows of zeros, filtered.
size_t shared_bytes(const MergedTile& tile, uint32_t source_height, const ResizeTarget& t, SoftwareFilter filter,
                    int taps) {
    return size_t{tiles::tile_source_rows(tile.rows, source_height, t.resized_height, filter) + uint32_t(taps)} *
           pitch_of(tile.columns, t.patch_size) * sizeof(float);
}

}  // namespace

MergedTile merged_tile(uint32_t source_width, uint32_t source_height, const ResizeTarget& t, SoftwareFilter filter) {
    const uint32_t p = t.patch_size;
    if (t.layout != ResizeLayout::merged_patches || p == 0 || p > kTileColumns) return {};
    const int taps = fixed_taps(source_width, source_height, t, filter);
    MergedTile tile;
    if (source_height <= 2 * uint64_t{t.resized_height}) {
        // Mild resizes: two patches tall (one was slower for Qwen2-VL at 8 x 1024^2), as
        // many whole patches wide as kTileColumns holds.
        tile = {2 * p, kTileColumns / p * p};
    } else if (filter == SoftwareFilter::bicubic && taps > 0) {
        // Bicubic shrinks by 2x to 4x (up to kMaxTaps taps; at 4.2x the two passes were as
        // fast): two patches wide, and two tall where a tile's rows leave four blocks a
        // multiprocessor, else one (measured for Qwen2-VL from 2048^2 to 4032x3024:
        // docs/benchmarks.md). Their bilinear shrinks were not measured and keep the two passes.
        constexpr size_t kFourBlocksShared = 44 * 1024;
        const uint32_t columns = 2 * p <= kTileColumns ? 2 * p : p;
        tile = {2 * p, columns};
        if (tile.rows > kMaxShrinkTileRows || shared_bytes(tile, source_height, t, filter, taps) > kFourBlocksShared)
            tile.rows = p;
    } else {
        return {};
    }
    if (shared_bytes(tile, source_height, t, filter, taps) > kMaxShared ||
        (t.height + tile.rows - 1) / tile.rows > 65535)
        return {};
    return tile;
}

void resize_merged_tiles(const TensorView& source, const ImageList& sources, uint32_t source_width,
                         uint32_t source_height, const ResizeTarget& target, SoftwareFilter filter,
                         const SpanTable& x_table, const SpanTable& y_table, const MergedTile& tile,
                         cudaStream_t stream) {
    const uint32_t p = target.patch_size;
    int taps = packed_bytes::reads_words(source, sources) && word_offsets_fit(source, source_width, source_height)
                   ? fixed_taps(source_width, source_height, target, filter)
                   : 0;
    // The instances past kMaxMildTaps hold kMaxShrinkTileRows rows' weights: taller tiles
    // (mild resizes of patches over 32 pixels, shrunk across by over 2x) take the table's loops.
    if (taps > kMaxMildTaps && tile.rows > kMaxShrinkTileRows) taps = 0;
    const uint32_t pitch = pitch_of(tile.columns, p);  // even where p is
    const size_t out_bytes = element_bytes(target.out_dtype);
    const bool pairs = p % 2 == 0 && target.image_stride % 2 == 0 &&
                       reinterpret_cast<uintptr_t>(target.out) % (2 * out_bytes) == 0;
    const size_t bytes = shared_bytes(tile, source_height, target, filter, taps);
    const FastDivmod tile_patches(tile.columns / p);
    const dim3 grid((target.width + tile.columns - 1) / tile.columns, (target.height + tile.rows - 1) / tile.rows,
                    target.images);
    const Order o = order_of(target);
    launch_for_output(target, [&](auto out) {
        using Out = decltype(out);
        const auto launch = [&](auto kernel) {
            allow_dynamic_shared(reinterpret_cast<const void*>(kernel), bytes);
            kernel<<<grid, kThreads, bytes, stream>>>(source, sources, source_width, source_height, target, o, x_table,
                                                      y_table, tile.rows, tile.columns, tile_patches, pitch, pairs);
        };
        const auto fixed = [&](auto n) { launch(merged_tiles_kernel<Out, decltype(n)::value>); };
        const auto fixed_even = [&](auto half) { launch(merged_tiles_kernel<Out, 2 * decltype(half)::value>); };
        if (!with_count<2, kMaxMildTaps>(taps, fixed) &&
            !(taps % 2 == 0 && with_count<kMaxMildTaps / 2 + 1, kMaxTaps / 2>(taps / 2, fixed_even)))
            launch(merged_tiles_kernel<Out, 0>);
    });
}

}  // namespace tvlm
