#pragma once
// The box mip chain built by CUDA on an imported texture, for content that arrives in CUDA
// memory (decoded or generated frames written to level 0): the passes of
// engine/mips/box_filter.h, the kernel of cuda/mips/box_mips.cu, the same results as Vulkan's
// update_mips/generate_mips. Surfaces on every level are made once; each call is
// stream-ordered (no host sync).
#include <cuda_runtime_api.h>

#include <vector>

#include "engine/mips/box_filter.h"
#include "cuda/mips/box_mips.h"
#include "cuda/cuda_handle.h"
#include "cuda_pipelines/cuda_mipmaps.h"
#include "cuda/device_buffer.h"

namespace tvlm {

// Which kernels run (the benchmark and the tests compare them; the default is the fastest).
enum class CudaBoxKernels : uint8_t {
    per_texel,  // one kernel for every format: one texel's taps per thread and level
    packed,     // RGBA8, sRGB8 and RGBA16F levels that halve: texels packed in words, 16-byte accesses
};

// A frame in CUDA memory that a chain's first pass reads level 0 from (BoxMipsLaunch::frame).
struct BoxFrameInput {
    const void* texels = nullptr;
    size_t row_bytes = 0;
};

class CudaBoxMips {
public:
    CudaBoxMips() = default;
    // The CudaTexture must outlive this object.
    explicit CudaBoxMips(const CudaMipmaps& texture, CudaBoxKernels kernels = CudaBoxKernels::packed);

    // Levels 1.. of every layer from level 0.
    void generate(cudaStream_t stream) const;
    // A frame in CUDA memory into level 0 of every layer (the format's texels, rows
    // `row_bytes` apart, layers one after another), then generate(). Where the chain's
    // first pass runs the packed kernel on an RGBA8 or RGBA16F texture (even sides) and the frame and
    // its rows are 16-byte aligned, that pass reads the frame and writes level 0 on the
    // way: the copy costs no launch and no second read. Otherwise a kernel writes the frame
    // through this object's level-0 surface, then generate(): rows of whole 16-byte chunks
    // as they are, in full sectors of the array (level_copy.h: faster than cudaMemcpy3D),
    // other rows texel by texel. Capturable in a CUDA graph (the surface lives
    // here). Throws Error, launching nothing, for r32f textures, short or misaligned rows,
    // and memory that is not CUDA device memory (host frames go through copy_to_level0).
    //
    // defer_tail: where the chain ends with a pass that its pass before finishes as a tail
    // (one tile; deferred_tail_level() < the level count), that last pass is left to
    // finish_deferred_tail(), which must follow on the same stream. Work launched in between
    // may read levels below deferred_tail_level() and runs beside the tail: a frame graph's
    // patches (CudaFrameGraph).
    void generate_from(const void* frame, size_t row_bytes, cudaStream_t stream, bool defer_tail = false) const;
    // The first level generate_from(..., true) leaves to finish_deferred_tail(); the level
    // count where it leaves none.
    uint32_t deferred_tail_level() const { return deferred_tail_level_; }
    // The levels generate_from(..., true) left; nothing where it left none.
    void finish_deferred_tail(cudaStream_t stream) const;
    // Only the texels of each level that depend on `region` of level 0. Throws Error,
    // launching nothing, for an empty or outside region.
    void update(const DirtyRegion& region, cudaStream_t stream) const;
    // Only the texels of each level that depend on the changed tiles flagged in
    // `changed_tiles` (device memory, one word per TVLM_CHANGE_TILE tile of level 0,
    // row-major: find_changed_tiles), decided on the GPU: no host sync, capturable in a
    // graph. Blocks of the first pass over unchanged tiles return at once; the small passes
    // after it run whole. Equals a full regeneration. One-layer textures only (Error).
    void update_changed(const uint32_t* changed_tiles, cudaStream_t stream) const;

private:
    void launch(TexelRect dirty, uint32_t first_layer, uint32_t layers, cudaStream_t stream) const;
    // The passes for `dirty` (the first driven by `changed_tiles`, or reading `frame`, where
    // given), the small end of the chain as one tail launch (launch_box_tail).
    // defer_tail: a whole chain whose fused tail is left to finish_deferred_tail().
    void run(TexelRect dirty, uint32_t first_layer, uint32_t layers, const uint32_t* changed_tiles, cudaStream_t stream,
             BoxFrameInput frame = {}, bool defer_tail = false) const;
    // `next`, the pass after l's, as l's tail (deferred: left to finish_deferred_tail()).
    void add_tail(BoxMipsLaunch& l, const BoxMipsLaunch& next, bool deferred) const;
    TextureDesc desc_;
    CudaBoxKernels kernels_ = CudaBoxKernels::packed;
    std::vector<SurfaceObject> surfaces_;  // one per level
    // For a chain's last pass done as the tail of the one before (BoxMipsTail): a texel
    // per block of that pass and layer, and a ticket counter per layer.
    DeviceBuffer<uint2> tail_scratch_;
    DeviceBuffer<unsigned int> tail_counters_;
    uint32_t blocks_at_once_ = 0;  // of the packed kernel on this device
    // The whole chain's pass (of plan_box_passes) that takes the last pass as its tail, and
    // that pass's first level; none: the level count.
    size_t deferrable_pass_ = 0;
    uint32_t deferred_tail_level_ = 0;
    BoxMipsLaunch deferred_tail_;       // what finish_deferred_tail() launches, built once
    bool frame_in_first_pass_ = false;  // generate_from's copy runs inside the chain's first pass (RGBA8, packed)
};

}  // namespace tvlm
