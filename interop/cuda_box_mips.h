#pragma once
// The box mip chain built by CUDA on an imported texture, for content that arrives in CUDA
// memory (decoded or generated frames written to level 0): the passes of
// engine/box_filter.h, the kernel of cuda/box_mips.cu, the same results as Vulkan's
// update_mips/generate_mips. Surfaces on every level are made once; each call is
// stream-ordered (no host sync).
#include <cuda_runtime_api.h>

#include <vector>

#include "box_filter.h"
#include "cuda_handle.h"
#include "cuda_mipmaps.h"
#include "device_buffer.h"

namespace tvlm {

// Which kernels run (the benchmark and the tests compare them; the default is the fastest).
enum class CudaBoxKernels : uint8_t {
    per_texel,  // one kernel for every format: one texel's taps per thread and level
    packed,     // RGBA8 and RGBA16F levels that halve: texels packed in words, 16-byte accesses
};

class CudaBoxMips {
public:
    CudaBoxMips() = default;
    // The CudaTexture must outlive this object.
    explicit CudaBoxMips(const CudaMipmaps& texture, CudaBoxKernels kernels = CudaBoxKernels::packed);

    // Levels 1.. of every layer from level 0.
    void generate(cudaStream_t stream) const;
    // Only the texels of each level that depend on `region` of level 0. Throws Error,
    // launching nothing, for an empty or outside region.
    void update(const DirtyRegion& region, cudaStream_t stream) const;

private:
    void launch(TexelRect dirty, uint32_t first_layer, uint32_t layers, cudaStream_t stream) const;
    TextureDesc desc_;
    CudaBoxKernels kernels_ = CudaBoxKernels::packed;
    std::vector<SurfaceObject> surfaces_;  // one per level
    // For a chain's last pass done as the tail of the one before (BoxMipsTail): a texel
    // per block of that pass and layer, and a ticket counter per layer.
    DeviceBuffer<uint2> tail_scratch_;
    DeviceBuffer<unsigned int> tail_counters_;
    uint32_t blocks_at_once_ = 0;  // of the packed kernel on this device
};

}  // namespace tvlm
