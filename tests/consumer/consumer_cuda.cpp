// Built against the installed texturevlm package where it has CUDA: the program links
// texturevlm::interop and texturevlm::cuda, imports a Vulkan texture into CUDA and builds its
// box chain there. Without a usable NVIDIA driver it says why and exits 0: what CI checks
// here is that the CUDA part of the package links.
#include <texturevlm/engine/core/context.h>
#include <texturevlm/cuda_pipelines/cuda_box_mips.h>
#include <texturevlm/cuda/cuda_check.h>
#include <texturevlm/engine/error.h>
#include <texturevlm/interop/textures/imported_texture.h>

#include <cstdio>

int main() {
    try {
        tvlm::Context context;
        const tvlm::ImportedTexture texture = tvlm::ImportedTexture::create(
            context, tvlm::TextureDesc::sampled_2d(64, 64, tvlm::Format::rgba8_unorm));
        const tvlm::CudaBoxMips mips(texture.cuda);
        mips.generate(nullptr);
        TVLM_CUDA_CHECK(cudaDeviceSynchronize());
        std::printf("texturevlm CUDA consumer: a 64x64 chain built by CUDA\n");
    } catch (const tvlm::Error& e) {
        std::printf("texturevlm CUDA consumer: linked; no CUDA run here (%s)\n", e.what());
    }
    return 0;
}
