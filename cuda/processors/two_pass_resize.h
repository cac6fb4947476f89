#pragma once
// The software filter in two passes, for every input dtype: across each source row into
// float rows (the scratch between the passes), then down each output pixel's column of
// them, fused with rescale, normalize and the target's layout. Each term is torch's own
// term in torch's order, so the values equal torch's antialiased resize bit for bit.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/processors/image_resize.h"
#include "cuda/processors/resize_spans.h"
#include "cuda/tensors/tensor_texels.h"

namespace tvlm {

// Whether an 8-bit bicubic shrink runs faster through the two passes than through the fused
// kernel (fused_resize.h), as measured (docs/benchmarks.md): where the row pass reads words
// (up to 48 taps a column) and its grid gives each thread several rows, its weights loaded
// once for them, as batches do; a single image's grid does not. (Bilinear shrinks were not
// measured: they keep the fused kernel.) Read as words only where the images
// are (rows contiguous, word-aligned), which callers that have no images yet cannot know.
// Monotonic in target.images: a target of fewer images prefers them no more often.
bool two_pass_words_preferred(uint32_t source_width, uint32_t source_height, const ResizeTarget& target,
                              SoftwareFilter filter);

// Writes the target from `source` (or `sources`) with the spans and weights of the two
// tables (image_resize.cu's span_table_kernel, already written on this stream), through
// `rows`: software_rows_bytes() of device memory that nothing else uses until the stream
// has run this.
void resize_two_pass(const TensorView& source, const ImageList& sources, uint32_t source_width, uint32_t source_height,
                     const ResizeTarget& target, const resize_spans::SpanTable& x_table,
                     const resize_spans::SpanTable& y_table, float* rows, cudaStream_t stream);

// The second pass alone: each output pixel's column of `rows` (the first pass's, on this stream).
void resize_columns(const float* rows, uint32_t source_height, const ResizeTarget& target,
                    const resize_spans::SpanTable& y_table, cudaStream_t stream);

}  // namespace tvlm
