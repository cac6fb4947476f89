#pragma once
// A frame's texels, as they are (no conversion), from CUDA memory into level 0 of a CUDA
// array through its surface: the fast form of cudaMemcpy3D for frames already on the GPU.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tvlm {

struct LevelCopy {
    const void* rows = nullptr;                // layer 0's row 0; layers one after another, `height` rows each
    size_t row_bytes = 0;                      // from one row to the next
    uint32_t texel_row_bytes = 0, height = 0;  // a row's texels, in bytes; rows per layer
    cudaSurfaceObject_t level = 0;
    bool layered = false;
    uint32_t first_layer = 0, layers = 1;
};

// Whether copy_level_rows takes the copy: 16-byte aligned rows and start, whole 16-byte
// chunks per row, at least one row.
bool copies_in_chunks(const LevelCopy& copy);

// Copies every row in 16-byte chunks, in `stream`. Writes into an array cost one L2
// transaction per 32-byte sector a store instruction touches, and a sector of the array's
// block-linear layout is 16 bytes of two neighbouring rows: so a warp stores 8 chunks x 4
// rows, faster than cudaMemcpy3D into the same array or a warp storing along one row.
// Throws Error where
// copies_in_chunks() is false.
void copy_level_rows(const LevelCopy& copy, cudaStream_t stream);

}  // namespace tvlm
