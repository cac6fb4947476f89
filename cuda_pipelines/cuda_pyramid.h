#pragma once
// A mip pyramid that only CUDA holds, fed from tensors: the frame-to-patches path of the
// Python package and of any CUDA-only caller. Level 0 (or a rectangle of it) is written
// from a strided tensor, levels are built by CudaBoxMips, any level reads back into a
// tensor, and patches are sampled by the texture unit. Every call is stream-ordered: no
// host waits, no allocations after construction. Move-only.
#include <cuda_runtime_api.h>

#include <vector>

#include "cuda_pipelines/cuda_array_texture.h"
#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/processors/image_resize.h"
#include "cuda/tensors/tensor_texels.h"

namespace tvlm {

// The texture format whose texels hold the dtype's values (what the Python package's
// DEFAULT_FORMAT picks): bytes in rgba8, float16 in rgba16f, the rest (bfloat16 widened) in
// rgba32f.
inline Format dtype_texture_format(TensorDtype dtype) {
    switch (dtype) {
        case TensorDtype::u8: return Format::rgba8_unorm;
        case TensorDtype::f16: return Format::rgba16f;
        default: return Format::rgba32f;
    }
}

class CudaPyramid {
public:
    // Allocates on the current CUDA device. Throws Error like CudaArrayTexture::create and
    // for one-channel formats (tensors have 3 or 4 channels).
    explicit CudaPyramid(const TextureDesc& desc);
    CudaPyramid(CudaPyramid&&) noexcept = default;
    CudaPyramid& operator=(CudaPyramid&&) noexcept = default;

    // Copies `region` of level 0 (every texel: {0, 0, width, height, 0, layers}) from the
    // tensor's element (b, c, y, x) = texel (x, y) of layer first_layer + b. Mips are not
    // rebuilt. Throws Error, launching nothing, for a region outside the texture. `sources`
    // (one image per layer of the region) replaces the tensor's batch with a list of images.
    void write(const TensorView& tensor, const DirtyRegion& region, cudaStream_t stream,
               const ImageList& sources = {}) const;
    void generate_mips(cudaStream_t stream) const { mips_.generate(stream); }
    // A whole frame (every layer) into level 0, then every level: write() + generate_mips(),
    // or, where the tensor holds the texture's own texels packed (RGBA8 bytes into rgba8,
    // RGBA float16 into rgba16f, RGBA float32 into rgba32f; rows of whole texels, layers one
    // after another), CudaBoxMips::generate_from, whose chain reads the frame in its first
    // pass where it can (one launch and one read of the frame fewer).
    void load_frame(const TensorView& tensor, cudaStream_t stream) const;
    void update_mips(const DirtyRegion& region, cudaStream_t stream) const { mips_.update(region, stream); }
    // Every texel of `level` of layers [first_layer, first_layer + layers) into the tensor.
    void read(uint32_t level, uint32_t first_layer, uint32_t layers, const TensorView& tensor,
              cudaStream_t stream) const;
    // The texture object patches are sampled through: trilinear, or 16x anisotropic for
    // gradient layouts (CudaPatchSampler::sample(desc(), texture_object(...), ...)).
    cudaTextureObject_t texture_object(bool anisotropic) const {
        return (anisotropic ? anisotropic_ : trilinear_).get();
    }
    // An image processor's output from layers [target.first_layer, + target.images): one
    // anisotropic trilinear sample per output pixel (cuda/processors/image_resize.h). Throws Error,
    // launching nothing, for layers the texture does not have or a target it cannot write.
    void resize(const ResizeTarget& target, cudaStream_t stream) const;

    const TextureDesc& desc() const { return texture_.desc(); }
    // Level `level`'s surface, for kernels that fill levels themselves (cuda_image_resizer).
    cudaSurfaceObject_t level_surface(uint32_t level) const { return surfaces_.at(level).get(); }

private:
    CudaArrayTexture texture_;
    CudaBoxMips mips_;
    std::vector<SurfaceObject> surfaces_;  // one per level
    TextureObject trilinear_, anisotropic_;
};

}  // namespace tvlm
