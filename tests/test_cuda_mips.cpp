// The CUDA box downsampler on the NVIDIA machine: every level against the CPU reference
// (bit-exact for 8-bit formats, one ulp for floats), against Vulkan's box chain on the same
// GPU (identical), partial updates against full ones, odd to 8192^2 sizes, layers, bad
// regions, and surfaces made and destroyed thousands of times without leaking.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_handle.h"
#include "cuda/device_buffer.h"
#include "interop/cuda_link.h"
#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "interop/textures/imported_texture.h"
#include "tests/random_image.h"
#include "engine/mips/reference_mips.h"
#include "tests/texture_compare.h"
#include "engine/textures/transfer.h"
#include "tests/vulkan_fixture.h"

using namespace tvlm;
using namespace tvlm::test;

namespace {

CudaLink& link(Context& context) {
    static CudaLink l(context);
    return l;
}

// Levels 1.. overwritten with a value no average of the test data produces everywhere
// (NaN for floats, 255 for bytes): a texel the kernel skips cannot pass.
void poison_levels(Context& context, Texture& texture) {
    const float poison = format_info(texture.desc().format).component == ComponentType::u8
                             ? 1.0f
                             : std::numeric_limits<float>::quiet_NaN();
    for (uint32_t layer = 0; layer < texture.desc().layers; ++layer)
        for (uint32_t level = 1; level < texture.levels(); ++level) {
            const Extent2D e = texture.extent(level);
            ImageF fill(e.width, e.height, format_info(texture.desc().format).channels);
            std::fill(fill.texels.begin(), fill.texels.end(), poison);
            upload(context, texture, host_pixels(fill), {.layer = layer, .level = level});
        }
}

struct Uploaded {
    ImportedTexture texture;
    std::vector<ImageF> bases;
    uint64_t ready = 0;
};

// narrow: random_image.h narrow_window_image (8-bit formats), else uniform random texels.
Uploaded upload_random(Context& context, uint32_t width, uint32_t height, uint32_t layers, Format format, uint32_t seed,
                       bool narrow = false) {
    Uploaded u;
    u.texture = ImportedTexture::create(context, {width, height, layers, 0, format, true});
    for (uint32_t layer = 0; layer < layers; ++layer) {
        u.bases.push_back(narrow ? narrow_window_image(width, height, format, seed + layer)
                                 : random_image(width, height, format, seed + layer));
        upload(context, u.texture.vulkan, host_pixels(u.bases.back()), {.layer = layer});
    }
    poison_levels(context, u.texture.vulkan);
    u.ready = context.queue().last_submitted();
    return u;
}

// Every level of every layer against the box reference applied to the level before it.
void check_against_reference(Context& context, Texture& texture) {
    for (uint32_t layer = 0; layer < texture.desc().layers; ++layer) {
        CAPTURE(layer);
        check_levels([&](uint32_t level) { return readback_image(context, texture, level, layer); }, texture.levels(),
                     texture.desc().width, texture.desc().height, texture.desc().format, MipFilter::box);
    }
}

struct Size {
    uint32_t width, height, layers;
};

}  // namespace

TEST_CASE("CUDA box mips equal the reference and Vulkan's box chain: every format, odd and layered sizes") {
    Context& context = shared_context();
    const CudaStream stream = make_stream();
    for (CudaBoxKernels kernels : {CudaBoxKernels::packed, CudaBoxKernels::per_texel})
        for (Format format : kAllFormats)
            for (Size s : {Size{1, 1, 1}, Size{5, 3, 1}, Size{4097, 3, 1}, Size{131, 257, 1}, Size{1000, 600, 3},
                           Size{1030, 70, 1}, Size{8190, 3, 1}, Size{512, 256, 4}, Size{2048, 2048, 1}}) {
                CAPTURE(static_cast<int>(kernels));
                CAPTURE(format_info(format).name);
                CAPTURE(s.width);
                CAPTURE(s.height);
                CAPTURE(s.layers);
                Uploaded u = upload_random(context, s.width, s.height, s.layers, format, s.width + s.height);
                link(context).cuda_wait(stream.get(), u.ready);
                CudaBoxMips(u.texture.cuda, kernels).generate(stream.get());
                TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
                check_against_reference(context, u.texture.vulkan);

                // Vulkan's compute path on the same content gives the same bits.
                Texture vulkan = Texture::create(context,
                                                 TextureDesc::sampled_array(s.width, s.height, s.layers, format));
                for (uint32_t layer = 0; layer < s.layers; ++layer)
                    upload(context, vulkan, host_pixels(u.bases[layer]), {.layer = layer});
                generate_mips(context, vulkan, MipFilter::box);
                for (uint32_t layer = 0; layer < s.layers; ++layer)
                    for (uint32_t level = 1; level < vulkan.levels(); ++level) {
                        CAPTURE(layer);
                        CAPTURE(level);
                        REQUIRE(readback(context, vulkan, level, layer) ==
                                readback(context, u.texture.vulkan, level, layer));
                    }
            }
}

// 8-bit chains whose 2x2 averages fall all over [0, 255], near black and white too, where
// uniform random bytes almost never average: the sRGB encode's first and last buckets.
// 2048^2 in one layer is 1024 blocks, one wave of the sRGB8 kernel on a 132-SM GPU (its
// last pass fused into the first) and more than one of RGBA8's; in two layers the last
// pass is a launch of its own for both.
TEST_CASE("CUDA 8-bit box chains of narrow-window texels equal the reference bit for bit") {
    Context& context = shared_context();
    const CudaStream stream = make_stream();
    for (CudaBoxKernels kernels : {CudaBoxKernels::packed, CudaBoxKernels::per_texel})
        for (Format format : {Format::rgba8_unorm, Format::rgba8_srgb})
            for (Size s : {Size{2048, 2048, 1}, Size{2048, 2048, 2}, Size{1000, 600, 3}}) {
                CAPTURE(static_cast<int>(kernels));
                CAPTURE(format_info(format).name);
                CAPTURE(s.width);
                CAPTURE(s.layers);
                Uploaded u = upload_random(context, s.width, s.height, s.layers, format, 17, true);
                link(context).cuda_wait(stream.get(), u.ready);
                CudaBoxMips(u.texture.cuda, kernels).generate(stream.get());
                TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
                check_against_reference(context, u.texture.vulkan);
            }
}

// RGBA16F chains of special values (subnormals, the largest finite, infinities, NaNs,
// ties) and of sums that a float sum would get wrong (random_image.h special_half_image),
// both kernels, a layered texture, bit for bit against the reference chain of each layer
// (the box float comparison elsewhere allows one ulp).
TEST_CASE("CUDA float16 box chains with special and cancelling values equal the reference bit for bit") {
    Context& context = shared_context();
    const CudaStream stream = make_stream();
    for (CudaBoxKernels kernels : {CudaBoxKernels::packed, CudaBoxKernels::per_texel})
        for (Size s : {Size{256, 128, 2}, Size{96, 64, 1}, Size{4096, 64, 1}}) {
            CAPTURE(static_cast<int>(kernels));
            CAPTURE(s.width);
            CAPTURE(s.height);
            ImportedTexture texture = ImportedTexture::create(context,
                                                              {s.width, s.height, s.layers, 0, Format::rgba16f, true});
            std::vector<ImageF> bases;
            for (uint32_t layer = 0; layer < s.layers; ++layer) {
                bases.push_back(special_half_image(s.width, s.height, 7 + layer));
                upload(context, texture.vulkan, host_pixels(bases.back()), {.layer = layer});
            }
            poison_levels(context, texture.vulkan);
            link(context).cuda_wait(stream.get(), context.queue().last_submitted());
            CudaBoxMips(texture.cuda, kernels).generate(stream.get());
            TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
            for (uint32_t layer = 0; layer < s.layers; ++layer) {
                CAPTURE(layer);
                check_half_box_chain(bases[layer], texture.vulkan.levels(), [&](uint32_t level) {
                    return readback_image(context, texture.vulkan, level, layer);
                });
            }
        }
}

TEST_CASE("CUDA and Vulkan box chains of 8192^2 and 8191x8193 RGBA8 equal the reference chain bit for bit [soak]") {
    Context& context = shared_context();
    const CudaStream stream = make_stream();
    for (Size s : {Size{8192, 8192, 1}, Size{8191, 8193, 1}}) {
        CAPTURE(s.width);
        Uploaded u = upload_random(context, s.width, s.height, 1, Format::rgba8_unorm, 5);
        link(context).cuda_wait(stream.get(), u.ready);
        CudaBoxMips(u.texture.cuda).generate(stream.get());
        TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        const auto reference = reference_mip_chain(u.bases[0], Format::rgba8_unorm, MipFilter::box,
                                                   u.texture.vulkan.levels());
        Texture vulkan = Texture::create(context, TextureDesc::sampled_2d(s.width, s.height, Format::rgba8_unorm));
        upload(context, vulkan, host_pixels(u.bases[0]));
        generate_mips(context, vulkan, MipFilter::box);
        for (uint32_t level = 1; level < vulkan.levels(); ++level) {
            CAPTURE(level);
            REQUIRE(mismatches(reference[level], readback_image(context, u.texture.vulkan, level), Format::rgba8_unorm,
                               Weights::exact, true) == 0);
            REQUIRE(mismatches(reference[level], readback_image(context, vulkan, level), Format::rgba8_unorm,
                               Weights::exact, true) == 0);
        }
    }
}

// Frames that arrive in CUDA memory go into an imported Vulkan texture as they go into a
// CUDA-only one: generate_from writes level 0 in the chain's first pass (packed kernels on
// even sides), or copies it apart (odd sides, rows off 16-byte boundaries), then the chain;
// Vulkan then reads the frame and its box chain. Level 0 holds another image before.
TEST_CASE("generate_from on an imported Vulkan texture: Vulkan reads the CUDA frame as level 0 and its box chain") {
    Context& context = shared_context();
    const CudaStream stream = make_stream();
    for (Format format : {Format::rgba8_unorm, Format::rgba8_srgb, Format::rgba16f})
        for (Size s : {Size{256, 128, 1}, Size{202, 118, 1}, Size{130, 66, 3}, Size{97, 64, 1}})
            for (size_t pad : {size_t{0}, size_t{4}}) {
                CAPTURE(format_info(format).name);
                CAPTURE(s.width);
                CAPTURE(s.layers);
                CAPTURE(pad);
                Uploaded u = upload_random(context, s.width, s.height, s.layers, format, 60 + s.width);
                const size_t tight = size_t{s.width} * format_info(format).texel_bytes(), row_bytes = tight + pad;
                std::vector<ImageF> frames;
                std::vector<uint8_t> pitched(row_bytes * s.height * s.layers, 0xee);
                for (uint32_t layer = 0; layer < s.layers; ++layer) {
                    frames.push_back(random_image(s.width, s.height, format, 90 + layer));
                    const std::vector<uint8_t> bytes = encode_texels(frames.back(), format);
                    for (uint32_t row = 0; row < s.height; ++row)
                        std::copy_n(bytes.begin() + ptrdiff_t(row * tight), tight,
                                    pitched.begin() + ptrdiff_t((size_t{layer} * s.height + row) * row_bytes));
                }
                DeviceBuffer<uint8_t> device_frame(pitched.size());
                TVLM_CUDA_CHECK(
                    cudaMemcpy(device_frame.data(), pitched.data(), pitched.size(), cudaMemcpyHostToDevice));
                link(context).cuda_wait(stream.get(), u.ready);
                CudaBoxMips(u.texture.cuda).generate_from(device_frame.data(), row_bytes, stream.get());
                TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
                for (uint32_t layer = 0; layer < s.layers; ++layer) {
                    CAPTURE(layer);
                    CHECK(encode_texels(readback_image(context, u.texture.vulkan, 0, layer), format) ==
                          encode_texels(frames[layer], format));
                }
                check_against_reference(context, u.texture.vulkan);
            }
}

TEST_CASE("CUDA partial box updates equal full regeneration for random rectangles") {
    Context& context = shared_context();
    const CudaStream stream = make_stream();
    std::mt19937 rng(11);
    const auto below = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
    for (Format format : {Format::rgba8_unorm, Format::rgba8_srgb, Format::rgba16f})
        for (Size s : {Size{4096, 4096, 1}, Size{1001, 777, 2}, Size{1024, 1024, 2}}) {
            CAPTURE(format_info(format).name);
            CAPTURE(s.width);
            Uploaded u = upload_random(context, s.width, s.height, s.layers, format, 3);
            link(context).cuda_wait(stream.get(), u.ready);
            const CudaBoxMips mips(u.texture.cuda);
            mips.generate(stream.get());
            TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
            for (int round = 0; round < 3; ++round) {
                const uint32_t w = 1 + below(300), h = 1 + below(300);
                const uint32_t x = below(s.width - w + 1), y = below(s.height - h + 1), layer = below(s.layers);
                const ImageF patch = random_image(w, h, format, 50 + static_cast<uint32_t>(round));
                context.queue().wait(
                    upload(context, u.texture.vulkan, host_pixels(patch), {.layer = layer, .x = x, .y = y}));
                mips.update({.x = x, .y = y, .width = w, .height = h, .first_layer = layer}, stream.get());
                TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
            }
            check_against_reference(context, u.texture.vulkan);
        }
}

TEST_CASE("CUDA box updates reject empty and outside regions, launching nothing") {
    Context& context = shared_context();
    const CudaStream stream = make_stream();
    Uploaded u = upload_random(context, 64, 32, 2, Format::rgba8_unorm, 9);
    const CudaBoxMips mips(u.texture.cuda);
    for (DirtyRegion bad :
         {DirtyRegion{.width = 0, .height = 4}, DirtyRegion{.x = 64, .width = 1, .height = 1},
          DirtyRegion{.width = 1, .height = 33}, DirtyRegion{.width = 1, .height = 1, .first_layer = 2}}) {
        CHECK_THROWS_WITH_AS(mips.update(bad, stream.get()), doctest::Contains("region"), Error);
    }
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    // Nothing ran: level 1 still holds the poison.
    for (float v : readback_image(context, u.texture.vulkan, 1).texels) REQUIRE(v == 1.0f);
}

TEST_CASE("making CUDA box mips on an import 2000 times leaks no device memory [soak]") {
    Context& context = shared_context();
    Uploaded u = upload_random(context, 256, 256, 1, Format::rgba8_unorm, 1);
    size_t free_before = 0, free_after = 0, total = 0;
    { CudaBoxMips warm(u.texture.cuda); }
    TVLM_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
    for (int i = 0; i < 2000; ++i) CudaBoxMips mips(u.texture.cuda);
    TVLM_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
    CHECK(free_after + (2u << 20) >= free_before);
}
