#pragma once
// Patch sampling in CUDA on any mipmapped texture CUDA sees (cuda_mipmaps.h): CudaPatchSampler
// below is the one object every caller samples patches through. Each call is one launch for
// the whole batch, stream-ordered, writing into a caller-provided device buffer
// [B, N, C, P, P] (float32 or float16).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "cuda_pipelines/cuda_mipmaps.h"
#include "cuda/device_buffer.h"
#include "engine/sampling/patch.h"
#include "cuda/sampling/patch_sampling.h"

namespace tvlm {

// A copy of a texture's levels in global memory, for the software-filtering kernel
// (rgba8 and rgba32f). Copied in `stream`; valid once the stream reaches it.
class PyramidCopy {
public:
    static PyramidCopy copy(const CudaMipmaps& texture, cudaStream_t stream);
    const SoftwarePyramid& pyramid() const { return pyramid_; }
    size_t bytes() const;

private:
    std::vector<DeviceBuffer<unsigned char>> levels_;
    SoftwarePyramid pyramid_;
};

// Where a sampler writes: `bytes` of device memory at `data`, [B, N, C, P, P] of `output`.
struct PatchTarget {
    void* data = nullptr;
    size_t bytes = 0;
    PatchOutput output;
};

// The one patch sampler: a layout with its records in device memory, and the one checked
// launch every caller (the CLI, the Python pyramids, Python video, frame graphs, several
// GPUs) makes through it. It either uploads the layout's records itself (C++ callers) or
// borrows records a caller already keeps on the device (Python keeps them in a tensor).
class CudaPatchSampler {
public:
    // Uploads `layout` to the current CUDA device (synchronously, once); `output` is what
    // the sample() overloads without a target write. Throws Error for C outside {3, 4} or
    // a layout without patches.
    explicit CudaPatchSampler(PatchLayout layout, PatchOutput output = {});
    // Borrows `records`: `layout`'s patches already in device memory, which the caller
    // keeps alive, unchanged, as long as the sampler.
    CudaPatchSampler(PatchLayout layout, const gpu::PatchGpu* records);

    // The texture object settings this layout needs: trilinear, 16x anisotropic for
    // gradient layouts (make_texture_object(sampler_desc())).
    CudaSamplerDesc sampler_desc() const;
    bool gradients() const { return layout_.mode == SamplingMode::gradients; }
    // Throws Error, launching nothing, when the texture is not the layout's size, lacks
    // levels or layers, `target` has C outside {3, 4} or no memory, or its bytes are not
    // the output's exact size: the one place a layout is checked against a texture.
    void check(const TextureDesc& texture, const PatchTarget& target) const;
    // The same for this sampler's own output settings, before there is memory to write.
    void check(const TextureDesc& texture, size_t output_bytes) const;
    // One launch in `stream` reading `object` (made on `texture` with sampler_desc()), after
    // check().
    void sample(const TextureDesc& texture, cudaTextureObject_t object, const PatchTarget& target,
                cudaStream_t stream) const;
    // The same into this sampler's own output settings.
    void sample(const CudaMipmaps& texture, cudaTextureObject_t object, void* output, size_t output_bytes,
                cudaStream_t stream) const {
        sample(texture.desc, object, {output, output_bytes, output_}, stream);
    }
    // Software filtering from a pyramid copy: the same output, no texture unit.
    void sample_software(const PyramidCopy& pyramid, const TextureDesc& texture, void* output, size_t output_bytes,
                         cudaStream_t stream) const;

    const PatchLayout& layout() const { return layout_; }
    const PatchOutput& output() const { return output_; }
    // A number no other sampler of the process has had: what keys a replayed launch of this
    // sampler's layout (an address can be reused by a later sampler of another layout).
    uint64_t serial() const { return serial_; }

private:
    PatchLaunch launch(const PatchTarget& target) const;
    PatchLayout layout_;
    PatchOutput output_;
    DeviceBuffer<gpu::PatchGpu> uploaded_;  // empty when borrowing
    const gpu::PatchGpu* records_ = nullptr;
    bool uploaded_records_ = false;  // no kernel on any stream writes records_
    uint64_t serial_ = next_serial();
    static uint64_t next_serial();
};

}  // namespace tvlm
