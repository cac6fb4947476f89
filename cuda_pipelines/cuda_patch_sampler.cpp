#include "cuda_pipelines/cuda_patch_sampler.h"

#include <atomic>
#include <string>

#include "cuda/cuda_check.h"
#include "engine/error.h"

namespace tvlm {

PyramidCopy PyramidCopy::copy(const CudaMipmaps& texture, cudaStream_t stream) {
    const TextureDesc& desc = texture.desc;
    if (desc.format != Format::rgba8_unorm && desc.format != Format::rgba32f)
        throw Error("software filtering reads rgba8 or rgba32f textures, not " +
                    std::string(format_info(desc.format).name));
    const uint32_t levels = desc.mip_levels();
    if (levels > uint32_t(kMaxPyramidLevels)) throw Error("software filtering supports at most 16 levels");
    const size_t texel = format_info(desc.format).texel_bytes();
    PyramidCopy copy;
    copy.pyramid_.rgba8 = desc.format == Format::rgba8_unorm;
    copy.pyramid_.level_count = int(levels);
    for (uint32_t l = 0; l < levels; ++l) {
        const Extent2D e = level_extent(desc.width, desc.height, l);
        copy.levels_.emplace_back(size_t{e.width} * e.height * desc.layers * texel);
        // Zeroed first: compute-sanitizer's initcheck does not count a copy out of a CUDA
        // array as a write, and reported every software sample (a benchmark/test path).
        TVLM_CUDA_CHECK(cudaMemsetAsync(copy.levels_.back().data(), 0, copy.levels_.back().bytes(), stream));
        cudaMemcpy3DParms p{};
        p.srcArray = texture.level(l);
        p.dstPtr = cudaPitchedPtr{copy.levels_.back().data(), e.width * texel, e.width, e.height};
        // Layered arrays are copied layer by layer as depth; plain 2D arrays have depth 0.
        p.extent = cudaExtent{e.width, e.height, texture.layered() ? desc.layers : 1};
        p.kind = cudaMemcpyDeviceToDevice;
        TVLM_CUDA_CHECK(cudaMemcpy3DAsync(&p, stream));
        copy.pyramid_.levels[l] = copy.levels_.back().data();
        copy.pyramid_.width[l] = int(e.width);
        copy.pyramid_.height[l] = int(e.height);
    }
    return copy;
}

size_t PyramidCopy::bytes() const {
    size_t total = 0;
    for (const auto& level : levels_) total += level.bytes();
    return total;
}

namespace {

void check_channels(uint32_t channels) {
    if (channels != 3 && channels != 4) throw Error("patches have 3 or 4 channels, not " + std::to_string(channels));
}

}  // namespace

uint64_t CudaPatchSampler::next_serial() {
    static std::atomic<uint64_t> serials{0};
    return ++serials;
}

CudaPatchSampler::CudaPatchSampler(PatchLayout layout, PatchOutput output)
    : layout_(std::move(layout)), output_(output) {
    check_channels(output_.channels);
    if (layout_.patches.empty()) throw Error("the layout has no patches");
    uploaded_ = DeviceBuffer<gpu::PatchGpu>(layout_.patches.size());
    copy_to_device_now(uploaded_.data(), layout_.patches.data(), uploaded_.bytes());
    records_ = uploaded_.data();
    uploaded_records_ = true;  // synchronously, above
}

CudaPatchSampler::CudaPatchSampler(PatchLayout layout, const gpu::PatchGpu* records)
    : layout_(std::move(layout)), records_(records) {
    if (layout_.patches.empty()) throw Error("the layout has no patches");
    if (!records_) throw Error("a borrowing sampler needs the layout's records in CUDA memory, not a null pointer");
}

CudaSamplerDesc CudaPatchSampler::sampler_desc() const {
    return gradients() ? CudaSamplerDesc::anisotropic() : CudaSamplerDesc::trilinear();
}

void CudaPatchSampler::check(const TextureDesc& desc, const PatchTarget& target) const {
    check_channels(target.output.channels);
    if (!target.data) throw Error("the patches' output has no memory (a null pointer)");
    check_patch_target(layout_, target.output, desc.width, desc.height, desc.mip_levels(), desc.layers, target.bytes);
}

void CudaPatchSampler::check(const TextureDesc& desc, size_t output_bytes) const {
    check_patch_target(layout_, output_, desc.width, desc.height, desc.mip_levels(), desc.layers, output_bytes);
}

PatchLaunch CudaPatchSampler::launch(const PatchTarget& target) const {
    return {records_,
            uint32_t(layout_.patches.size()),
            layout_.patch_size,
            target.output.channels,
            gradients(),
            target.output.half,
            float(layout_.width),
            float(layout_.height),
            target.data,
            uploaded_records_};
}

void CudaPatchSampler::sample(const TextureDesc& texture, cudaTextureObject_t object, const PatchTarget& target,
                              cudaStream_t stream) const {
    check(texture, target);
    sample_patches_texture(object, texture.layers > 1, format_info(texture.format).channels, launch(target), stream);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

void CudaPatchSampler::sample_software(const PyramidCopy& pyramid, const TextureDesc& texture, void* output,
                                       size_t output_bytes, cudaStream_t stream) const {
    const PatchTarget target{output, output_bytes, output_};
    check(texture, target);
    SoftwarePyramid py = pyramid.pyramid();
    py.max_anisotropy = gradients() ? kMaxAnisotropy : 1;
    sample_patches_software(py, launch(target), stream);
    TVLM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tvlm
