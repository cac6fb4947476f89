// A block is a tile of kTileColumns window columns by tile_rows window rows of one image. It
// finds the source rows its rows read (the union of their spans), filters each across into
// its columns in shared memory (rows spread over the block's row groups, a thread per
// column), then sums each output pixel down its span from there, in window order (merged
// patches: merged_tiles.cu, the same two phases in the output's order). Rows read by two tiles are filtered by both: resizes are taken where that costs
// less than storing and loading every filtered row once through device memory
// (docs/benchmarks.md).
#include "cuda/processors/tiled_resize.h"

#include "cuda/cuda_check.h"
#include "cuda/cuda_devices.h"
#include "cuda/processors/packed_bytes.cuh"
#include "cuda/processors/resize_output.cuh"
#include "cuda/processors/row_taps.cuh"
#include "cuda/processors/tile_source_rows.cuh"
#include "cuda/tensors/tensor_elements.cuh"
#include "engine/error.h"

namespace tvlm {

namespace {

using namespace resize_output;
using namespace row_taps;
using resize_spans::SpanTable;

using tiles::kThreads;
using tiles::kTileColumns;
constexpr uint32_t kRowGroups = kThreads / kTileColumns;
using tiles::kMaxShared;

using tiles::tile_source_rows;

constexpr uint32_t kPitch = kTileColumns * 3;  // floats a filtered source row takes in shared memory
size_t shared_bytes(uint32_t source_rows) { return size_t{source_rows} * kPitch * sizeof(float); }

// G > 0: rows read as words, G groups of four taps (row_taps::across_words); 0: element by
// element. The output in window order (planar or tiles; merged patches: merged_tiles.cu).
template <class Out, int G>
__global__ void __launch_bounds__(kThreads)
    tiled_kernel(TensorView source, const __grid_constant__ ImageList sources, uint32_t source_width,
                 uint32_t source_height, ResizeTarget t, Order o, SpanTable x_table, SpanTable y_table,
                 uint32_t tile_rows) {
    extern __shared__ float across_rows[];  // [source row - first][kTileColumns][3]: lanes 3 words apart, 32 banks
    __shared__ int rows_first, rows_end;
    const uint32_t column = threadIdx.x % kTileColumns, group = threadIdx.x / kTileColumns;
    const uint32_t first_x = blockIdx.x * kTileColumns, x = first_x + column;
    const uint32_t first_y = blockIdx.y * tile_rows, image = blockIdx.z;
    const uint32_t end_y = min(t.height, first_y + tile_rows);
    if (threadIdx.x < 32) tiles::find_tile_source_rows(y_table, first_y, end_y, rows_first, rows_end);
    __syncthreads();
    const int lo = rows_first, hi = rows_end;
    if (x < t.width) {
        const int first = x_table.first[x], count = x_table.count[x];
        const float* wx = x_table.weights + size_t{x} * x_table.taps;
        const void* data = image_data(source, sources, t.first_layer + image);
        float* to = across_rows + size_t{column} * 3;
        if constexpr (G > 0) {
            float w[4 * G];
            word_weights<G>(wx, count, w);
            const uint32_t stride_y = uint32_t(source.stride_y), stride_c = uint32_t(source.stride_c);
            const uint32_t end = words_end(stride_c, stride_y, source_width, source_height);
            for (int r = lo + int(group); r < hi; r += kRowGroups) {
                float across[3];
                across_words<G>(static_cast<const unsigned char*>(data), uint32_t(r) * stride_y + uint32_t(first),
                                stride_c, end, w, wx, count, across);
                float* s = to + size_t(r - lo) * kPitch;
                s[0] = across[0], s[1] = across[1], s[2] = across[2];
            }
        } else {
            const uint8_t* first_column = static_cast<const uint8_t*>(data) + int64_t(first) * source.stride_x;
            const int64_t channel[3] = {0, source.stride_c, 2 * source.stride_c};
            for (int r = lo + int(group); r < hi; r += kRowGroups) {
                float across[3];
                across_elements(first_column + int64_t(r) * source.stride_y, source.stride_x, channel, wx, count,
                                across);
                float* s = to + size_t(r - lo) * kPitch;
                s[0] = across[0], s[1] = across[1], s[2] = across[2];
            }
        }
    }
    __syncthreads();
    // Down the column of (x, y) from the rows in shared memory.
    if (x >= t.width) return;
    for (uint32_t y = first_y + group; y < end_y; y += kRowGroups) {
        const int first = y_table.first[y], count = y_table.count[y];
        const float* wy = y_table.weights + size_t{y} * y_table.taps;
        const float* from = across_rows + (count ? (first - lo) * int(kPitch) : 0) + column * 3;
        float value[3] = {0.0f, 0.0f, 0.0f};
        for (int r = 0; r < count; ++r, from += kPitch) {
            const float w = wy[r];
            for (int c = 0; c < 3; ++c) value[c] += from[c] * w;
        }
        write_pixel<Out>(t, o, image, place_at(t, o, x, y), value);
    }
}

}  // namespace

uint32_t tiled_resize_rows(TensorDtype source_dtype, uint32_t source_width, uint32_t source_height,
                           const ResizeTarget& target, SoftwareFilter filter) {
    if (source_dtype != TensorDtype::u8) return 0;
    if (target.layout == ResizeLayout::merged_patches)
        return merged_tile(source_width, source_height, target, filter).rows;
    // Measured (docs/benchmarks.md): 16-row tiles for mild resizes, 8 for bilinear shrinks,
    // whose spans are half as tall; bicubic shrinks by more than 2x filter too many rows twice.
    const bool mild = source_height <= 2 * uint64_t{target.resized_height};
    const uint32_t rows = mild ? 16 : filter == SoftwareFilter::bilinear ? 8 : 0;
    if (!rows || shared_bytes(tile_source_rows(rows, source_height, target.resized_height, filter)) > kMaxShared ||
        (target.height + rows - 1) / rows > 65535)
        return 0;
    return rows;
}

void resize_tiled(const TensorView& source, const ImageList& sources, uint32_t source_width, uint32_t source_height,
                  const ResizeTarget& target, SoftwareFilter filter, const SpanTable& x_table, const SpanTable& y_table,
                  cudaStream_t stream) {
    if (target.layout == ResizeLayout::merged_patches) {
        const MergedTile tile = merged_tile(source_width, source_height, target, filter);
        if (source.dtype != TensorDtype::u8 || !tile.rows)
            throw Error("the tiled resize does not take this resize: use resize_software");
        return resize_merged_tiles(source, sources, source_width, source_height, target, filter, x_table, y_table, tile,
                                   stream);
    }
    const uint32_t tile_rows = tiled_resize_rows(source.dtype, source_width, source_height, target, filter);
    if (!tile_rows) throw Error("the tiled resize does not take this resize: use resize_software");
    const size_t bytes = shared_bytes(tile_source_rows(tile_rows, source_height, target.resized_height, filter));
    // Words where columns read 6 to 32 taps (fewer are cheaper byte by byte, as in the two passes' row pass).
    const bool words = packed_bytes::reads_words(source, sources) &&
                       word_offsets_fit(source, source_width, source_height) && x_table.taps >= 6 && x_table.taps <= 32;
    const uint32_t groups = words ? (x_table.taps + 3) / 4 : 0;
    const dim3 grid((target.width + kTileColumns - 1) / kTileColumns, (target.height + tile_rows - 1) / tile_rows,
                    target.images);
    const Order o = order_of(target);
    launch_for_output(target, [&](auto out) {
        using Out = decltype(out);
        const auto launch = [&](auto kernel) {
            // The most any tile takes, not this launch's bytes: with its own static shared
            // memory, a launch of a little under 48 KB would otherwise be refused.
            allow_dynamic_shared(reinterpret_cast<const void*>(kernel), kMaxShared);
            kernel<<<grid, kThreads, bytes, stream>>>(source, sources, source_width, source_height, target, o, x_table,
                                                      y_table, tile_rows);
        };
        if (!with_count<2, 8>(int(groups), [&](auto g) { launch(tiled_kernel<Out, decltype(g)::value>); }))
            launch(tiled_kernel<Out, 0>);
    });
}

}  // namespace tvlm
