#pragma once
// The software filter's two passes for 8-bit images, tile by tile through shared memory,
// where the rows between the passes would cost more than filtering a tile's few extra rows
// twice: mild resizes (shrunk down the columns by up to 2x, or stretched) and bilinear
// shrinks. A block filters the source rows its output tile reads across into shared
// memory, then down each output column from there, so those rows never go to device
// memory. Same terms, same order: the values are the two-pass kernels' (and torch's) bit
// for bit.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "cuda/processors/image_resize.h"
#include "cuda/processors/resize_spans.h"
#include "cuda/tensors/tensor_texels.h"

namespace tvlm {

namespace tiles {

constexpr uint32_t kTileColumns = 64;  // a thread each, in each row group
constexpr uint32_t kThreads = 256;
// The most dynamic shared memory a tile takes: two blocks a multiprocessor, with their static shared memory.
constexpr size_t kMaxShared = 96 * 1024;

// The most source rows a tile of `tile_rows` window rows reads: its spans' firsts are at most
// (tile_rows - 1) * scale + 1 apart, and the last span has at most max_taps rows (+2 for the
// spans' float rounding).
inline uint32_t tile_source_rows(uint32_t tile_rows, uint32_t source_height, uint32_t resized_height,
                                 SoftwareFilter filter) {
    const double scale = double(source_height) / double(resized_height);
    return uint32_t(std::ceil((tile_rows - 1) * scale)) + 3 +
           resize_spans::max_taps(source_height, resized_height, filter);
}

}  // namespace tiles

// The output rows of resize_tiled's tiles where it takes this resize, else 0: 8-bit
// sources shrunk down the columns by up to 2x (or stretched), or planar and tiled outputs
// shrunk by more with the bilinear filter, where a tile's rows fit in shared memory. Merged
// patches are written in tiles of whole patches, in the output's order, from mild resizes
// and bicubic shrinks by up to 4x (merged_tile()). The same for every batch size, stride
// and alignment: software_rows_bytes() decides with it.
uint32_t tiled_resize_rows(TensorDtype source_dtype, uint32_t source_width, uint32_t source_height,
                           const ResizeTarget& target, SoftwareFilter filter);

// Writes the target from `source` (or `sources`) with the spans and weights of the two
// tables (image_resize.cu's span_table_kernel, already written on this stream).
void resize_tiled(const TensorView& source, const ImageList& sources, uint32_t source_width, uint32_t source_height,
                  const ResizeTarget& target, SoftwareFilter filter, const resize_spans::SpanTable& x_table,
                  const resize_spans::SpanTable& y_table, cudaStream_t stream);

// A tile of merged patches (merged_tiles.cu), in window rows and columns (whole patches);
// rows 0 where the merged tiles do not take the resize.
struct MergedTile {
    uint32_t rows = 0, columns = 0;
};
MergedTile merged_tile(uint32_t source_width, uint32_t source_height, const ResizeTarget& target,
                       SoftwareFilter filter);

// resize_tiled's merged patches (merged_tiles.cu) in `tile`, merged_tile()'s for the resize.
void resize_merged_tiles(const TensorView& source, const ImageList& sources, uint32_t source_width,
                         uint32_t source_height, const ResizeTarget& target, SoftwareFilter filter,
                         const resize_spans::SpanTable& x_table, const resize_spans::SpanTable& y_table,
                         const MergedTile& tile, cudaStream_t stream);

}  // namespace tvlm
