#pragma once
// The source rows a tile of window rows reads, for the tiled kernels (tiled_resize.cu,
// merged_tiles.cu): the union of the rows' spans, found by the block's first warp.
#include <climits>
#include <cstdint>

#include "cuda/processors/resize_spans.h"

namespace tvlm::tiles {

// Called by the block's first warp (all 32 lanes): window rows [first_y, end_y) read source
// rows [rows_first, rows_end), written by lane 0 to the block's shared `rows_first` and
// `rows_end`; rows of the zero padding (count 0) read nothing, and a tile of only those
// reads [0, 0). The caller synchronizes the block before reading them.
__device__ __forceinline__ void find_tile_source_rows(const resize_spans::SpanTable& y_table, uint32_t first_y,
                                                      uint32_t end_y, int& rows_first, int& rows_end) {
    int lo = INT_MAX, hi = 0;
    for (uint32_t y = first_y + threadIdx.x; y < end_y; y += 32) {
        const int first = y_table.first[y], count = y_table.count[y];
        if (count) lo = min(lo, first), hi = max(hi, first + count);
    }
    for (int d = 16; d; d /= 2) {
        lo = min(lo, __shfl_xor_sync(~0u, lo, d));
        hi = max(hi, __shfl_xor_sync(~0u, hi, d));
    }
    if (threadIdx.x == 0) rows_first = hi > lo ? lo : 0, rows_end = hi > lo ? hi : 0;
}

}  // namespace tvlm::tiles
