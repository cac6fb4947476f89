#pragma once
// The software filter in one kernel for 8-bit images, the processors' usual input:
// two_pass_resize.cu's passes (across each source row, then down each output column)
// done tile by tile in shared memory, so the rows between them never go to device memory
// and a byte's conversion is not repeated for every tap that reads it. Same terms, same
// order, so the values are the two-pass kernels' (and torch's) bit for bit.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/processors/image_resize.h"
#include "cuda/processors/resize_spans.h"
#include "cuda/tensors/tensor_texels.h"

namespace tvlm {

// Whether resize_fused takes this resize: 8-bit sources shrunk across by 8x or more, whose
// tiles' source spans fit in shared memory (up to about 20x) and whose window is not
// absurdly tall. (Where it takes them, the two passes may still be faster:
// image_resize.cu's software_kernel() asks two_pass_words_preferred() too.)
bool fused_resize_fits(TensorDtype source_dtype, uint32_t source_width, uint32_t source_height,
                       const ResizeTarget& target, SoftwareFilter filter);

// Writes the target from `source` (or `sources`) with the spans and weights of the two
// tables (image_resize.cu's span_table_kernel, already written on this stream).
void resize_fused(const TensorView& source, const ImageList& sources, uint32_t source_width, uint32_t source_height,
                  const ResizeTarget& target, SoftwareFilter filter, const resize_spans::SpanTable& x_table,
                  const resize_spans::SpanTable& y_table, cudaStream_t stream);

// Whether the fused kernel's row filter alone, into rows between the passes, then
// two_pass_resize's column pass, beats the fused kernel: where fused_resize_fits(), the fused
// kernel's tiles would not fill one wave of the current device, and they would filter a
// quarter more chunks of source rows (a single image shrunk to a small window: CLIP's 4096^2
// to 224^2). The same terms in the same order either way. A target of fewer images may
// prefer it where the whole target did not: resize_software then takes the fused kernel
// unless its scratch holds the rows.
bool fused_rows_preferred(TensorDtype source_dtype, uint32_t source_width, uint32_t source_height,
                          const ResizeTarget& target, SoftwareFilter filter);

// That resize: writes the target through `rows` (software_rows_bytes() of device memory).
void resize_fused_rows(const TensorView& source, const ImageList& sources, uint32_t source_width,
                       uint32_t source_height, const ResizeTarget& target, SoftwareFilter filter,
                       const resize_spans::SpanTable& x_table, const resize_spans::SpanTable& y_table, float* rows,
                       cudaStream_t stream);

}  // namespace tvlm
