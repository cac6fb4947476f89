#include "cuda/tensors/level_copy.h"

#include "cuda/cuda_check.h"
#include "engine/error.h"

namespace tvlm {

namespace {

// A warp is 8 chunks x 4 rows, a block 2 x 4 warps: 16 chunks (256 bytes) x 16 rows.
constexpr uint32_t kWarpChunks = 8, kWarpRows = 4, kBlockChunks = 16, kBlockRows = 16;

__global__ void __launch_bounds__(256) copy_level_rows_kernel(const __grid_constant__ LevelCopy c) {
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint32_t chunk = blockIdx.x * kBlockChunks + (warp & 1) * kWarpChunks + lane % kWarpChunks;
    const uint32_t row = blockIdx.y * kBlockRows + (warp >> 1) * kWarpRows + lane / kWarpChunks;
    if (chunk * 16 >= c.texel_row_bytes || row >= c.height) return;
    const size_t layer = blockIdx.z;
    const auto* from = static_cast<const unsigned char*>(c.rows) + (layer * c.height + row) * c.row_bytes + chunk * 16u;
    const uint4 v = __ldcs(reinterpret_cast<const uint4*>(from));  // read once
    if (c.layered) surf2DLayeredwrite(v, c.level, int(chunk * 16), int(row), int(c.first_layer + layer));
    else surf2Dwrite(v, c.level, int(chunk * 16), int(row));
}

}  // namespace

bool copies_in_chunks(const LevelCopy& c) {
    return c.rows && reinterpret_cast<uintptr_t>(c.rows) % 16 == 0 && c.row_bytes % 16 == 0 &&
           c.texel_row_bytes % 16 == 0 && c.texel_row_bytes > 0 && c.height > 0 && c.layers > 0 &&
           c.row_bytes >= c.texel_row_bytes;
}

void copy_level_rows(const LevelCopy& c, cudaStream_t stream) {
    if (!copies_in_chunks(c))
        throw Error(
            "a chunked level copy takes 16-byte aligned rows of whole 16-byte chunks: copy the frame with "
            "cudaMemcpy3D instead");
    if (c.layers > 65535) throw Error("a level copy covers at most 65535 layers per call: split the batch");
    const uint32_t chunks = c.texel_row_bytes / 16;
    const dim3 grid((chunks + kBlockChunks - 1) / kBlockChunks, (c.height + kBlockRows - 1) / kBlockRows, c.layers);
    copy_level_rows_kernel<<<grid, 256, 0, stream>>>(c);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tvlm
