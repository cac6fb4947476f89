// A block writes a tile of kTileColumns window columns by tile_rows window rows of one
// image. It walks the source rows the tile reads, kChunkRows at a time: stages their bytes
// (three channels, the tile's column span) in shared memory, filters each staged row
// across into the tile's columns (a lane per row, a warp per column, so the warp reads
// one column's weights at one address), then adds each row's term into the outputs that
// read it (a lane per column, a warp per output row). Rows arrive in ascending order, so
// every output sums torch's terms in torch's order, as the two-pass kernels do. Where a
// window's tiles are too few to fill the GPU, the same kernel runs as a row filter alone
// (rows_tiling: a block per chunk of source rows, its across values written to the rows
// between the passes), and two_pass_resize's column pass adds them down.
#include "cuda/processors/fused_resize.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include <cuda_pipeline.h>

#include "cuda/cuda_check.h"
#include "cuda/cuda_devices.h"
#include "cuda/processors/packed_bytes.cuh"
#include "cuda/processors/resize_output.cuh"
#include "cuda/processors/two_pass_resize.h"
#include "cuda/tensors/tensor_elements.cuh"
#include "engine/error.h"

namespace tvlm {

namespace {

using namespace resize_output;
using packed_bytes::byte_value;
using resize_spans::SpanTable;

constexpr uint32_t kTileColumns = 32;  // a lane each when rows are added into outputs
constexpr uint32_t kChunkRows = 32;    // a lane each when rows are filtered across
constexpr uint32_t kWarps = 8;
constexpr uint32_t kMaxRowsEach = 4;                      // output rows per thread: tile_rows / kWarps
constexpr uint32_t kColumnsEach = kTileColumns / kWarps;  // columns per warp when rows are filtered across
// The across values' row pitch: lanes along a row or down a column fall in 32 banks.
constexpr uint32_t kAcrossPitch = kTileColumns + 1;
constexpr size_t kMaxShared = 200 * 1024;
// Across, the fused kernel's least source width / resized width. Below it the two passes
// were measured faster (their scratch is cheap where a row has few taps).
constexpr uint32_t kMinShrink = 8;

struct Tiling {
    uint32_t tile_rows = 8;  // output rows per block: 8, 16 or 32
    uint32_t pitch = 0;      // a staged source row, in 32-bit words (odd: lanes' rows fall in 32 banks)
    uint32_t x_taps = 0;     // a column's weights: up to 3 leading zeros, its taps, zeros to a multiple of 4
    uint32_t y_taps = 0;
    bool copy_async = true;  // rows are copied word by word, asynchronously (stride_x 1, aligned images)
    uint32_t band_rows = 0;  // rows only (resize_fused_rows): the source rows a block filters; 0: fused
    uint32_t buffers = 2;    // staging buffers: 2 overlap the next chunk's copy with this one's
                             // filtering; 1 halves their memory, so more blocks fit where that
                             // lets a second block per multiprocessor hide the copy instead
    size_t bytes = 0;        // dynamic shared memory
};

// The staged rows: one or two buffers of [3][kChunkRows][pitch] words (two: the next chunk's
// copy runs while this one is filtered), each followed by slack: a column with fewer taps than
// its warp's most (at the image's edges) reads up to x_taps / 4 words past its own, with
// zero weights, which from a buffer's last row must not reach the other buffer.
__host__ __device__ inline uint32_t buffer_words(const Tiling& f) {
    return 3 * kChunkRows * f.pitch + f.x_taps / 4 + 2;
}
__host__ __device__ inline size_t staged_words(const Tiling& f) { return size_t{f.buffers} * buffer_words(f); }

size_t shared_bytes(const Tiling& f) {
    return sizeof(float) * (size_t{kTileColumns} * f.x_taps + size_t{f.tile_rows} * f.y_taps +
                            size_t{3} * kChunkRows * kAcrossPitch) +
           sizeof(uint32_t) * (staged_words(f) + f.buffers * 3 * kChunkRows);  // rows and their shifts
}

// Everything but the tile height, which depends on the device (launch() picks it).
Tiling tiling_of(uint32_t source_width, uint32_t source_height, const ResizeTarget& t, SoftwareFilter filter) {
    const double scale = double(source_width) / double(t.resized_width);
    const double support = (filter == SoftwareFilter::bilinear ? 1.0 : 2.0) * std::max(scale, 1.0);
    // A tile's column centres are (kTileColumns - 1) * scale apart and each reads +-support,
    // rounded at both ends. A staged row starts up to 3 bytes before its span (the word
    // holding its first byte), and the filter reads one word past the words it uses.
    const uint32_t span = std::min<uint32_t>(source_width,
                                             uint32_t(std::ceil((kTileColumns - 1) * scale + 2.0 * support)) + 4);
    Tiling f;
    f.pitch = ((span + 3 + 3) / 4 + 1) | 1;
    f.x_taps = (resize_spans::max_taps(source_width, t.resized_width, filter) + 3 + 3) / 4 * 4;
    f.y_taps = resize_spans::max_taps(source_height, t.resized_height, filter);
    f.tile_rows = kWarps * kMaxRowsEach;
    f.bytes = shared_bytes(f);
    return f;
}

// Copies the chunk's source rows [r0, r0 + n) of the tile's span (three channels) into a
// staging buffer, a warp per (channel, row), its lanes along the row. With copy_async, each
// row is copied from the word holding its first byte (shift[c][r] bytes before it), whole
// words asynchronously (the next chunk's copy overlaps this one's filtering); a last word
// that would reach past the image's last byte (`end`) is copied byte by byte, so nothing
// outside the image is read. Otherwise (channels-last or unaligned images) byte by byte.
__device__ void stage_rows(const TensorView& source, const unsigned char* data, const unsigned char* end, int r0,
                           uint32_t n, int lo, int width, uint32_t* staged, int* shift, const Tiling& f) {
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (uint32_t p = warp; p < 3 * n; p += kWarps) {
        const uint32_t c = p / n, r = p % n;
        const unsigned char* from = data + int64_t(c) * source.stride_c + int64_t(r0 + int(r)) * source.stride_y +
                                    int64_t(lo) * source.stride_x;
        uint32_t* to = staged + (c * kChunkRows + r) * f.pitch;
        if (!f.copy_async) {
            for (int k = int(lane); k < width; k += 32)
                reinterpret_cast<unsigned char*>(to)[k] = from[int64_t(k) * source.stride_x];
            if (lane == 0) shift[c * kChunkRows + r] = 0;
            continue;
        }
        const int head = int(reinterpret_cast<uintptr_t>(from) & 3);
        const uint32_t* words = reinterpret_cast<const uint32_t*>(from - head);
        int whole = (head + width) / 4;
        const int tail = (head + width) % 4;
        const unsigned char* last = reinterpret_cast<const unsigned char*>(words + whole);
        const bool tail_in_image = tail && last + 4 <= end;
        whole += tail_in_image;
        for (int i = int(lane); i < whole; i += 32) __pipeline_memcpy_async(to + i, words + i, sizeof(uint32_t));
        if (lane == 0) {
            shift[c * kChunkRows + r] = head;
            if (!tail_in_image)
                for (int b = 0; b < tail; ++b) reinterpret_cast<unsigned char*>(to + whole)[b] = last[b];
        }
    }
    __pipeline_commit();
}

template <class Out>
__global__ void __launch_bounds__(kWarps * 32)
    fused_kernel(TensorView source, const __grid_constant__ ImageList sources, uint32_t source_width,
                 uint32_t source_height, ResizeTarget t, Order o, SpanTable x_table, SpanTable y_table, Tiling f,
                 float* rows_out) {
    extern __shared__ __align__(16) float shared[];
    float* x_weights = shared;                               // [kTileColumns][f.x_taps]
    float* y_weights = x_weights + kTileColumns * f.x_taps;  // [f.tile_rows][f.y_taps]
    float* across = y_weights + f.tile_rows * f.y_taps;      // [3][kChunkRows][kAcrossPitch]
    uint32_t* staged = reinterpret_cast<uint32_t*>(across +
                                                   3 * kChunkRows * kAcrossPitch);  // [buffers][3][rows][pitch]
    int* shifts = reinterpret_cast<int*>(staged + staged_words(f));                 // [buffers][3][rows]
    __shared__ int column_first[kTileColumns], column_count[kTileColumns];
    __shared__ int row_first[kWarps * kMaxRowsEach], row_count[kWarps * kMaxRowsEach];
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32, image = blockIdx.z;
    const uint32_t x0 = blockIdx.x * kTileColumns, y0 = blockIdx.y * f.tile_rows;
    const bool rows_only = rows_out != nullptr;
    const uint32_t columns = min(kTileColumns, t.width - x0), rows = rows_only ? 0 : min(f.tile_rows, t.height - y0);
    if (warp == 0) {
        // Columns past the window's edge read nothing (zero weights).
        column_first[lane] = lane < columns ? x_table.first[x0 + lane] : 0;
        column_count[lane] = lane < columns ? x_table.count[x0 + lane] : 0;
        if (lane < rows) row_first[lane] = y_table.first[y0 + lane], row_count[lane] = y_table.count[y0 + lane];
    }
    __syncthreads();
    // Spans are monotonic (the padding's sit at the image's edges): the tile reads source
    // columns [lo, lo + width) and rows [row_lo, row_hi).
    const int lo = column_first[0], width = column_first[columns - 1] + column_count[columns - 1] - lo;
    const int row_lo = rows_only ? int(blockIdx.y * f.band_rows) : row_first[0];
    const int row_hi = rows_only ? int(min(source_height, (blockIdx.y + 1) * f.band_rows))
                                 : row_first[rows - 1] + row_count[rows - 1];
    const unsigned char* data = static_cast<const unsigned char*>(image_data(source, sources, t.first_layer + image));
    const unsigned char* end = data + 2 * source.stride_c + int64_t(source_height - 1) * source.stride_y +
                               int64_t(source_width - 1) * source.stride_x + 1;
    const uint32_t buffer = buffer_words(f), plane = kChunkRows * f.pitch;
    if (row_lo < row_hi)
        stage_rows(source, data, end, row_lo, min(kChunkRows, uint32_t(row_hi - row_lo)), lo, width, staged, shifts, f);
    // A column's weights start (first - lo) % 4 zeros in, so its taps' words and its
    // weights' float4s line up; a zero weight adds +0, which leaves a sum unchanged.
    for (uint32_t i = threadIdx.x; i < kTileColumns * f.x_taps; i += blockDim.x) {
        const uint32_t c = i / f.x_taps, k = i % f.x_taps;
        float w = 0.0f;
        if (c < columns) {
            const int j = int(k) - ((column_first[c] - lo) & 3);
            if (j >= 0 && j < column_count[c]) w = x_table.weights[size_t{x0 + c} * x_table.taps + j];
        }
        x_weights[i] = w;
    }
    for (uint32_t i = threadIdx.x; i < rows * f.y_taps; i += blockDim.x) {
        const uint32_t r = i / f.y_taps, j = i % f.y_taps;
        y_weights[i] = int(j) < row_count[r] ? y_table.weights[size_t{y0 + r} * y_table.taps + j] : 0.0f;
    }
    float sum[kMaxRowsEach][3] = {};
    uint32_t chunk = 0;
    for (int r0 = row_lo; r0 < row_hi; r0 += kChunkRows, ++chunk) {
        const uint32_t n = min(kChunkRows, uint32_t(row_hi - r0));
        const uint32_t now = f.buffers == 2 ? chunk & 1 : 0;
        const uint32_t* rows_now = staged + now * buffer;
        const int* shift_now = shifts + now * 3 * kChunkRows;
        // With two buffers, the next chunk's copy goes to the other one, which the last
        // chunk's filtering (before the barrier that ended it) was the last to read.
        const int next = r0 + int(kChunkRows);
        if (f.buffers == 2 && next < row_hi) {
            stage_rows(source, data, end, next, min(kChunkRows, uint32_t(row_hi - next)), lo, width,
                       staged + ((chunk + 1) & 1) * buffer, shifts + ((chunk + 1) & 1) * 3 * kChunkRows, f);
            __pipeline_wait_prior(1);
        } else {
            __pipeline_wait_prior(0);
        }
        __syncthreads();
        // Across: a lane per staged row; a warp takes every kWarps-th column, all at once (12
        // sums in flight: each is a chain of dependent FMAs, in torch's order), reading one
        // weight float4 per column for its 32 rows. A row's words are read shifted by its
        // head bytes (a funnel shift of two words), so they line up with the weights; a
        // column with fewer groups than the most reads zero weights for the rest.
        if (lane < n) {
            int base[kColumnsEach];
            int groups = 0;
#pragma unroll
            for (uint32_t q = 0; q < kColumnsEach; ++q) {
                const uint32_t c = warp + q * kWarps;
                const int count = column_count[c], offset = count ? column_first[c] - lo : 0, lead = offset & 3;
                base[q] = (offset - lead) / 4;
                groups = max(groups, count ? (lead + count + 3) / 4 : 0);
            }
            const uint32_t* row = rows_now + lane * f.pitch;
            uint32_t bits[3], low[kColumnsEach][3];
            float s[kColumnsEach][3] = {};
#pragma unroll
            for (uint32_t ch = 0; ch < 3; ++ch) {
                bits[ch] = 8 * uint32_t(shift_now[ch * kChunkRows + lane]);
#pragma unroll
                for (uint32_t q = 0; q < kColumnsEach; ++q) low[q][ch] = row[ch * plane + base[q]];
            }
            for (int g = 0; g < groups; ++g) {
#pragma unroll
                for (uint32_t q = 0; q < kColumnsEach; ++q) {
                    const float4 wg = reinterpret_cast<const float4*>(x_weights + (warp + q * kWarps) * f.x_taps)[g];
#pragma unroll
                    for (uint32_t ch = 0; ch < 3; ++ch) {
                        const uint32_t high = row[ch * plane + base[q] + g + 1];
                        const uint32_t v = __funnelshift_r(low[q][ch], high, bits[ch]);
                        low[q][ch] = high;
                        s[q][ch] = __fmaf_rn(byte_value<0>(v), wg.x, s[q][ch]);
                        s[q][ch] = __fmaf_rn(byte_value<1>(v), wg.y, s[q][ch]);
                        s[q][ch] = __fmaf_rn(byte_value<2>(v), wg.z, s[q][ch]);
                        s[q][ch] = __fmaf_rn(byte_value<3>(v), wg.w, s[q][ch]);
                    }
                }
            }
#pragma unroll
            for (uint32_t q = 0; q < kColumnsEach; ++q)
#pragma unroll
                for (uint32_t ch = 0; ch < 3; ++ch)
                    across[(ch * kChunkRows + lane) * kAcrossPitch + warp + q * kWarps] = s[q][ch];
        }
        __syncthreads();
        if (rows_only) {
            // The chunk's across values to the rows between the passes, [image][row][column][channel],
            // a line of the tile's columns at a time (coalesced).
            float* to = rows_out + ((size_t{image} * source_height + uint32_t(r0)) * t.width + x0) * 3;
            const uint32_t line = columns * 3;
            for (uint32_t i = threadIdx.x; i < n * line; i += blockDim.x) {
                const uint32_t r = i / line, k = i % line;
                to[size_t{r} * t.width * 3 + k] = across[((k % 3) * kChunkRows + r) * kAcrossPitch + k / 3];
            }
        }
        // With one buffer, the next chunk's copy starts once every row of this one is
        // filtered (the barrier above), and runs while its rows are added down.
        if (f.buffers == 1 && next < row_hi)
            stage_rows(source, data, end, next, min(kChunkRows, uint32_t(row_hi - next)), lo, width, staged, shifts, f);
        // Down: a lane per column, a warp per output row (and every kWarps-th after it).
        if (lane < columns) {
#pragma unroll
            for (uint32_t k = 0; k < kMaxRowsEach; ++k) {
                const uint32_t y = warp + k * kWarps;
                if (y < rows) {
                    const int first = row_first[y];
                    const int end = min(first + row_count[y], r0 + int(n));
                    for (int r = max(first, r0); r < end; ++r) {
                        const float wy = y_weights[y * f.y_taps + uint32_t(r - first)];
                        const float* a = across + uint32_t(r - r0) * kAcrossPitch + lane;
#pragma unroll
                        for (uint32_t ch = 0; ch < 3; ++ch)
                            sum[k][ch] = __fmaf_rn(a[ch * kChunkRows * kAcrossPitch], wy, sum[k][ch]);
                    }
                }
            }
        }
        // The next chunk's across values overwrite these only after its own barrier above.
    }
    if (rows_only || lane >= columns) return;
#pragma unroll
    for (uint32_t k = 0; k < kMaxRowsEach; ++k) {
        const uint32_t y = warp + k * kWarps;
        if (y < rows) write_pixel<Out>(t, o, image, place_at(t, o, x0 + lane, y0 + y), sum[k]);
    }
}

// More than 48 KiB of shared memory is an opt-in per function and device: allowed the most
// any tiling takes, so every tiling launches and its occupancy can be asked.
template <class Out>
void allow_large_shared() {
    allow_dynamic_shared(reinterpret_cast<const void*>(fused_kernel<Out>), kMaxShared);
}

// Blocks of `bytes` shared memory the current device holds at once (asked once per size).
template <class Out>
uint64_t resident_blocks(size_t bytes) {
    return resident_wave_blocks(reinterpret_cast<const void*>(fused_kernel<Out>), kWarps * 32, bytes);
}

dim3 grid_of(const ResizeTarget& t, const Tiling& f) {
    return dim3((t.width + kTileColumns - 1) / kTileColumns, (t.height + f.tile_rows - 1) / f.tile_rows, t.images);
}
dim3 rows_grid_of(const ResizeTarget& t, const Tiling& f, uint32_t source_height) {
    return dim3((t.width + kTileColumns - 1) / kTileColumns, (source_height + f.band_rows - 1) / f.band_rows, t.images);
}

// The tile height with the least time, and that time: waves of resident blocks times the
// chunks of source rows each block filters ((tile_rows + 3) * scale rows: tall tiles filter
// fewer rows twice, short ones give small batches more blocks). Ties go to the taller.
template <class Out>
double pick_tile_rows(Tiling& f, const ResizeTarget& t, uint32_t source_height) {
    const double scale = std::max(double(source_height) / double(t.resized_height), 1.0);
    double best = 0;
    Tiling chosen = f;
    for (uint32_t rows = kWarps * kMaxRowsEach; rows >= kWarps; rows /= 2) {
        Tiling g = f;
        g.tile_rows = rows;
        g.bytes = shared_bytes(g);
        const dim3 grid = grid_of(t, g);
        const uint64_t blocks = uint64_t{grid.x} * grid.y * grid.z;
        const uint64_t resident = resident_blocks<Out>(g.bytes);
        const double cost = double((blocks + resident - 1) / resident) * std::ceil((rows + 3) * scale / kChunkRows);
        if (rows == kWarps * kMaxRowsEach || cost < best) best = cost, chosen = g;
    }
    f = chosen;
    return best;
}

// What the launch's tiling depends on besides the kernel: the device, the grid's extent and
// the rows a tile filters.
struct TilingKey {
    int device;
    uint32_t width, height, images, resized_height, source_height, pitch, x_taps, y_taps;
    bool operator==(const TilingKey& o) const {  // CUDA sources are C++17: no defaulted comparison
        return device == o.device && width == o.width && height == o.height && images == o.images &&
               resized_height == o.resized_height && source_height == o.source_height && pitch == o.pitch &&
               x_taps == o.x_taps && y_taps == o.y_taps;
    }
};

// The tiling a launch takes: the tile height and staging buffers of the fewest waves. One
// staging buffer where that takes fewer: more blocks fit per multiprocessor, and a
// co-resident block's filtering hides a chunk's copy as a second buffer would. A serving
// loop resizes one geometry call after call, so each thread keeps its last choice (the
// choice asks the occupancy table six times under its lock).
template <class Out>
Tiling launch_tiling(const ResizeTarget& t, uint32_t source_height, Tiling f) {
    int device = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&device));
    const TilingKey key{device,        t.width, t.height, t.images, t.resized_height,
                        source_height, f.pitch, f.x_taps, f.y_taps};
    thread_local std::optional<std::pair<TilingKey, Tiling>> last;
    if (last && last->first == key) {
        Tiling chosen = last->second;
        chosen.copy_async = f.copy_async;
        return chosen;
    }
    Tiling single = f;
    single.buffers = 1;
    if (pick_tile_rows<Out>(single, t, source_height) < pick_tile_rows<Out>(f, t, source_height)) f = single;
    last.emplace(key, f);
    return f;
}

template <class Out>
void launch(cudaStream_t stream, const TensorView& source, const ImageList& sources, uint32_t source_width,
            uint32_t source_height, const ResizeTarget& t, const SpanTable& x_table, const SpanTable& y_table,
            Tiling f) {
    allow_large_shared<Out>();
    f = launch_tiling<Out>(t, source_height, f);
    fused_kernel<Out><<<grid_of(t, f), kWarps * 32, f.bytes, stream>>>(source, sources, source_width, source_height, t,
                                                                       order_of(t), x_table, y_table, f, nullptr);
}

// The tiling where the fused kernel takes the resize (its tallest tiles, which take the
// most shared memory, fit; its shortest give a grid the hardware launches), else none.
std::optional<Tiling> fused_tiling(TensorDtype source_dtype, uint32_t source_width, uint32_t source_height,
                                   const ResizeTarget& target, SoftwareFilter filter) {
    if (source_dtype != TensorDtype::u8 || target.images == 0 || target.images > 65535 ||
        source_width < kMinShrink * target.resized_width)
        return std::nullopt;
    Tiling f = tiling_of(source_width, source_height, target, filter);
    Tiling shortest = f;
    shortest.tile_rows = kWarps;
    if (f.bytes > kMaxShared || grid_of(target, shortest).y > 65535) return std::nullopt;
    return f;
}


// The row filter alone: a block per tile of kTileColumns window columns by one chunk of
// source rows, one staging buffer, no output rows (so no rows filtered twice). Its grid
// is the source's height over kChunkRows, where the fused kernel's is the window's.
Tiling rows_tiling(Tiling f) {
    f.band_rows = kChunkRows;
    f.tile_rows = 0;
    f.buffers = 1;
    f.bytes = shared_bytes(f);
    return f;
}

}  // namespace

bool fused_rows_preferred(TensorDtype source_dtype, uint32_t source_width, uint32_t source_height,
                          const ResizeTarget& target, SoftwareFilter filter) {
    std::optional<Tiling> f = fused_tiling(source_dtype, source_width, source_height, target, filter);
    if (!f || rows_grid_of(target, rows_tiling(*f), source_height).y > 65535) return false;
    // The fused kernel's tiles are few where a large shrink makes a small window (one image
    // to 224^2): under a wave, part of the GPU idles while each block walks its long column
    // of source rows. The row filter's grid follows the source, which fills the GPU.
    // Where other work runs beside it (a processor's branches), the fused kernel's spare
    // multiprocessors are not idle: so the row filter also needs to filter a fifth fewer
    // chunks of source rows in all (short tiles filter their overlapping rows twice).
    allow_large_shared<float>();
    const Tiling fused = launch_tiling<float>(target, source_height, *f);
    const dim3 grid = grid_of(target, fused);
    const uint64_t blocks = uint64_t{grid.x} * grid.y * grid.z;
    if (blocks >= resident_blocks<float>(fused.bytes)) return false;
    const double scale = std::max(double(source_height) / double(target.resized_height), 1.0);
    const uint64_t fused_chunks = blocks * uint64_t(std::ceil((fused.tile_rows + 3) * scale / kChunkRows));
    const dim3 rows = rows_grid_of(target, rows_tiling(*f), source_height);
    return 5 * uint64_t{rows.x} * rows.y * rows.z < 4 * fused_chunks;
}

void resize_fused_rows(const TensorView& source, const ImageList& sources, uint32_t source_width,
                       uint32_t source_height, const ResizeTarget& target, SoftwareFilter filter,
                       const SpanTable& x_table, const SpanTable& y_table, float* rows, cudaStream_t stream) {
    std::optional<Tiling> f = fused_tiling(source.dtype, source_width, source_height, target, filter);
    if (!f) throw Error("the fused resize takes 8-bit images whose tiles fit in shared memory: use resize_software");
    if (f->x_taps != (x_table.taps + 6) / 4 * 4) throw Error("the fused resize's span table is not this resize's");
    f->copy_async = packed_bytes::reads_words(source, sources);
    const Tiling r = rows_tiling(*f);
    allow_large_shared<float>();
    fused_kernel<float><<<rows_grid_of(target, r, source_height), kWarps * 32, r.bytes, stream>>>(
        source, sources, source_width, source_height, target, order_of(target), x_table, y_table, r, rows);
    TVLM_CUDA_CHECK(cudaGetLastError());
    resize_columns(rows, source_height, target, y_table, stream);
}

bool fused_resize_fits(TensorDtype source_dtype, uint32_t source_width, uint32_t source_height,
                       const ResizeTarget& target, SoftwareFilter filter) {
    return fused_tiling(source_dtype, source_width, source_height, target, filter).has_value();
}

void resize_fused(const TensorView& source, const ImageList& sources, uint32_t source_width, uint32_t source_height,
                  const ResizeTarget& target, SoftwareFilter filter, const SpanTable& x_table, const SpanTable& y_table,
                  cudaStream_t stream) {
    std::optional<Tiling> f = fused_tiling(source.dtype, source_width, source_height, target, filter);
    if (!f) throw Error("the fused resize takes 8-bit images whose tiles fit in shared memory: use resize_software");
    if (y_table.taps != f->y_taps || f->x_taps != (x_table.taps + 6) / 4 * 4)
        throw Error("the fused resize's span tables are not this resize's");
    f->copy_async = packed_bytes::reads_words(source, sources);
    launch_for_output(target, [&](auto out) {
        launch<decltype(out)>(stream, source, sources, source_width, source_height, target, x_table, y_table, *f);
    });
}

}  // namespace tvlm
