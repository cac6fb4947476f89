#pragma once
// Patch sampling in CUDA on any mipmapped texture CUDA sees (cuda_mipmaps.h). Every caller
// (the CLI, the Python pyramids, Python video, frame graphs, several GPUs) reaches the kernel
// through sample_patches() below, the one place that checks a launch against its texture.
// CudaPatchSampler is that launch for a layout made on the host: uploaded once to device
// memory, each call one launch for the whole batch, stream-ordered, writing into a
// caller-provided device buffer [B, N, C, P, P] (float32 or float16).
#include <cuda_runtime_api.h>

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

// Samples `launch`'s patches (records already in device memory: a CudaPatchSampler's, or a
// layout's that Python keeps on the device) from `object`, a texture object on a texture
// described by `texture`, in one launch in `stream`. Throws Error, launching nothing, when
// the records' image size is not the texture's or C is not 3 or 4; no patches: nothing.
void sample_patches(const PatchLaunch& launch, const TextureDesc& texture, cudaTextureObject_t object,
                    cudaStream_t stream);

class CudaPatchSampler {
public:
    // Uploads `layout` to the current CUDA device. Throws Error for C outside {3, 4}.
    explicit CudaPatchSampler(PatchLayout layout, PatchOutput output = {});

    // The texture object settings this layout needs: trilinear, 16x anisotropic for
    // gradient layouts (make_texture_object(sampler_desc())).
    CudaSamplerDesc sampler_desc() const;
    // Throws Error, launching nothing, when the texture is not the layout's size, lacks
    // levels or layers, or `output_bytes` is not the output's exact size.
    void check(const TextureDesc& texture, size_t output_bytes) const;
    // One launch in `stream` reading `object` (made on `texture` with sampler_desc()).
    void sample(const CudaMipmaps& texture, cudaTextureObject_t object, void* output, size_t output_bytes,
                cudaStream_t stream) const;
    // Software filtering from a pyramid copy: the same output, no texture unit.
    void sample_software(const PyramidCopy& pyramid, const TextureDesc& texture, void* output, size_t output_bytes,
                         cudaStream_t stream) const;

    const PatchLayout& layout() const { return layout_; }
    const PatchOutput& output() const { return output_; }

private:
    PatchLaunch launch(void* output) const;
    PatchLayout layout_;
    PatchOutput output_;
    DeviceBuffer<gpu::PatchGpu> patches_;
};

}  // namespace tvlm
