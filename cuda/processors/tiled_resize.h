#pragma once
// The software filter's two passes for 8-bit images, tile by tile through shared memory,
// where the rows between the passes would cost more than filtering a tile's few extra rows
// twice: mild resizes (shrunk down the columns by up to 2x, or stretched) and bilinear
// shrinks. A block filters the source rows its output tile reads across into shared
// memory, then down each output column from there, so those rows never go to device
// memory. Same terms, same order: the values are the two-pass kernels' (and torch's) bit
// for bit.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/processors/image_resize.h"
#include "cuda/processors/resize_spans.h"
#include "cuda/tensors/tensor_texels.h"

namespace tvlm {

// The output rows of resize_tiled's tiles where it takes this resize, else 0: 8-bit
// sources shrunk down the columns by up to 2x (or stretched), or planar and tiled outputs
// shrunk by more with the bilinear filter, where a tile's rows fit in shared memory. Merged
// patches are written in tiles of whole patches, in the output's order. The same for every
// batch size, stride and alignment: software_rows_bytes() decides with it.
uint32_t tiled_resize_rows(TensorDtype source_dtype, uint32_t source_width, uint32_t source_height,
                           const ResizeTarget& target, SoftwareFilter filter);

// Writes the target from `source` (or `sources`) with the spans and weights of the two
// tables (image_resize.cu's span_table_kernel, already written on this stream).
void resize_tiled(const TensorView& source, const ImageList& sources, uint32_t source_width, uint32_t source_height,
                  const ResizeTarget& target, SoftwareFilter filter, const resize_spans::SpanTable& x_table,
                  const resize_spans::SpanTable& y_table, cudaStream_t stream);

}  // namespace tvlm
