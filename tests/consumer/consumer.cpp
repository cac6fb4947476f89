// Built against the installed texturevlm package: a Vulkan context of its own, a float
// texture, its box mip chain on the GPU, and level 3 against the CPU reference.
#include <texturevlm/engine/core/context.h>
#include <texturevlm/engine/error.h>
#include <texturevlm/engine/mips/generate_mips.h>
#include <texturevlm/engine/mips/reference_mips.h>
#include <texturevlm/engine/textures/texture.h>
#include <texturevlm/engine/textures/transfer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

int main() {
    try {
        tvlm::Context context;
        tvlm::ImageF base(37, 21, 4);
        for (size_t i = 0; i < base.texels.size(); ++i) base.texels[i] = float((i * 7919) % 1000) / 1000.0f;
        tvlm::Texture texture = tvlm::Texture::create(context,
                                                      tvlm::TextureDesc::sampled_2d(37, 21, tvlm::Format::rgba32f));
        tvlm::upload(context, texture, tvlm::host_pixels(base));
        tvlm::generate_mips(context, texture, tvlm::MipFilter::box);
        const tvlm::ImageF got = tvlm::readback_image(context, texture, 3);
        const std::vector<tvlm::ImageF> want = tvlm::reference_mip_chain(base, tvlm::Format::rgba32f,
                                                                         tvlm::MipFilter::box, 4);
        double worst = 0;
        for (size_t i = 0; i < got.texels.size(); ++i)
            worst = std::max(worst, double(std::abs(got.texels[i] - want[3].texels[i])));
        const bool same_size = got.texels.size() == want[3].texels.size();
        std::printf("texturevlm consumer on %s: level 3 (%ux%u) of a 37x21 box chain, max difference %.2g\n",
                    context.device_info().name.c_str(), got.width, got.height, worst);
        return same_size && worst <= 1e-5 ? 0 : 1;
    } catch (const tvlm::Error& e) {
        std::fprintf(stderr, "texturevlm consumer: %s\n", e.what());
        return 1;
    }
}
