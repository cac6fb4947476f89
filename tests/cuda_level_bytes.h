#pragma once
// One level of a one-layer RGBA8 CUDA texture as its bytes (a synchronous copy out of the
// array): what the CUDA video tests compare between a partial update and a full rebuild.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda_pipelines/cuda_mipmaps.h"

namespace tvlm {

inline std::vector<uint8_t> level_bytes(const CudaMipmaps& t, uint32_t level) {
    const Extent2D e = level_extent(t.desc.width, t.desc.height, level);
    std::vector<uint8_t> bytes(size_t{e.width} * e.height * 4);
    TVLM_CUDA_CHECK(cudaMemcpy2DFromArray(bytes.data(), size_t{e.width} * 4, t.level(level), 0, 0, size_t{e.width} * 4,
                                          e.height, cudaMemcpyDeviceToHost));
    return bytes;
}

}  // namespace tvlm
