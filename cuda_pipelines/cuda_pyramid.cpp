#include "cuda_pipelines/cuda_pyramid.h"

#include <string>

#include "cuda/cuda_check.h"
#include "engine/error.h"

namespace tvlm {

CudaPyramid::CudaPyramid(const TextureDesc& desc) {
    if (format_info(desc.format).channels != 4)
        throw Error("a pyramid fed from tensors needs an RGBA format, not " +
                    std::string(format_info(desc.format).name));
    texture_ = CudaArrayTexture::create(desc);
    mips_ = CudaBoxMips(texture_.mipmaps());
    for (uint32_t l = 0; l < desc.mip_levels(); ++l) surfaces_.push_back(texture_.mipmaps().make_surface(l));
    trilinear_ = texture_.mipmaps().make_texture_object(CudaSamplerDesc::trilinear());
    anisotropic_ = texture_.mipmaps().make_texture_object(CudaSamplerDesc::anisotropic());
}

void CudaPyramid::write(const TensorView& tensor, const DirtyRegion& region, cudaStream_t stream,
                        const ImageList& sources) const {
    const TexelRect r = checked_dirty_rect(region, desc().width, desc().height, desc().layers);
    write_texels(tensor, surfaces_[0].get(), desc().layers > 1, surface_texel(desc().format),
                 {r.x0, r.y0, r.x1 - r.x0, r.y1 - r.y0, region.first_layer, region.layers}, stream, sources);
}

namespace {

// Whether `tensor` is `desc`'s level 0 as the texture stores it: texels of the format's own
// type, 4 channels interleaved, rows of whole texels, layers row after row.
bool holds_texels(const TensorView& tensor, const TextureDesc& desc) {
    // bfloat16 is widened into rgba32f, and sRGB textures are never a dtype's own format:
    // both take the frame through write().
    if (tensor.dtype == TensorDtype::bf16 || dtype_texture_format(tensor.dtype) != desc.format || tensor.channels != 4)
        return false;
    const int64_t row = tensor.stride_y;
    return tensor.stride_x == 4 && tensor.stride_c == 1 && row >= int64_t{desc.width} * 4 && row % 4 == 0 &&
           (desc.layers == 1 || tensor.stride_b == row * desc.height);
}

}  // namespace

void CudaPyramid::load_frame(const TensorView& tensor, cudaStream_t stream) const {
    if (holds_texels(tensor, desc())) {
        mips_.generate_from(tensor.data, size_t(tensor.stride_y) * element_bytes(tensor.dtype), stream);
        return;
    }
    write(tensor, {0, 0, desc().width, desc().height, 0, desc().layers}, stream);
    generate_mips(stream);
}

void CudaPyramid::read(uint32_t level, uint32_t first_layer, uint32_t layers, const TensorView& tensor,
                       cudaStream_t stream) const {
    if (level >= desc().mip_levels() || layers == 0 || uint64_t{first_layer} + layers > desc().layers)
        throw Error("read of level " + std::to_string(level) + ", layers " + std::to_string(first_layer) + ".." +
                    std::to_string(uint64_t{first_layer} + layers) + " from a texture of " +
                    std::to_string(desc().mip_levels()) + " levels and " + std::to_string(desc().layers) +
                    " layers: ask for ones that exist");
    const Extent2D e = level_extent(desc().width, desc().height, level);
    read_texels(surfaces_[level].get(), desc().layers > 1, surface_texel(desc().format),
                {0, 0, e.width, e.height, first_layer, layers}, tensor, stream);
}

void CudaPyramid::resize(const ResizeTarget& target, cudaStream_t stream) const {
    if (uint64_t{target.first_layer} + target.images > desc().layers)
        throw Error("a resize of layers " + std::to_string(target.first_layer) + ".." +
                    std::to_string(uint64_t{target.first_layer} + target.images) + " from a texture of " +
                    std::to_string(desc().layers) + " layers: ask for layers that exist");
    // 8-bit texels read as [0, 1]; the processors work in the input's units (0..255).
    const float texel_scale = format_info(desc().format).component == ComponentType::u8 ? 255.0f : 1.0f;
    resize_from_texture(anisotropic_.get(), desc().layers > 1, desc().width, desc().height, texel_scale, target,
                        stream);
}

}  // namespace tvlm
