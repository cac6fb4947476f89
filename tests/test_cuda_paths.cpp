// The two other ways CUDA gets a mipmapped texture, on the NVIDIA machine: a CUDA-only
// array (cudaMallocMipmappedArray, levels by CudaBoxMips) and an OpenGL texture registered
// with CUDA (map per frame, or mapped once and kept). Each runs the same sampling kernels
// against the CPU reference on its own levels, outputs poisoned first; bad input; and
// thousands of creations and registrations with device memory and fds flat.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include "cuda_pipelines/cuda_array_texture.h"
#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/cuda_check.h"
#include "cuda_pipelines/cuda_frame_graph.h"
#include "cuda/cuda_handle.h"
#include "interop/gl/cuda_gl_texture.h"
#include "cuda_pipelines/cuda_patch_sampler.h"
#include "cuda/device_buffer.h"
#include "interop/gl/egl_context.h"
#include "engine/error.h"
#include "cuda/tensors/level_copy.h"
#include "tests/open_fds.h"
#include "engine/sampling/patch_layouts.h"
#include "cuda/sampling/patch_sampling.h"
#include "cuda_pipelines/pinned_staging.h"
#include "tests/random_image.h"
#include "engine/sampling/reference_sampling.h"
#include "tests/sampling_check.h"
#include "tests/texture_compare.h"
#include "cuda/tensors/tensor_texels.h"
#include "cuda/sampling/texture_reads.h"

using namespace tvlm;
using namespace tvlm::test;

namespace {

size_t level_bytes(const TextureDesc& d, uint32_t level) {
    const Extent2D e = level_extent(d.width, d.height, level);
    return size_t{e.width} * e.height * d.layers * format_info(d.format).texel_bytes();
}

// One level's bytes, every layer (layers one after another), through a CUDA copy out of
// the array.
std::vector<uint8_t> stored_level(const CudaMipmaps& t, uint32_t level) {
    const Extent2D e = level_extent(t.desc.width, t.desc.height, level);
    const size_t texel = format_info(t.desc.format).texel_bytes();
    std::vector<uint8_t> bytes(level_bytes(t.desc, level));
    cudaMemcpy3DParms p{};
    p.srcArray = t.level(level);
    p.dstPtr = cudaPitchedPtr{bytes.data(), e.width * texel, e.width, e.height};
    p.extent = cudaExtent{e.width, e.height, t.desc.layers};
    p.kind = cudaMemcpyDeviceToHost;
    TVLM_CUDA_CHECK(cudaMemcpy3D(&p));
    return bytes;
}

// The same level decoded, one image per layer.
std::vector<ImageF> read_level(const CudaMipmaps& t, uint32_t level) {
    const Extent2D e = level_extent(t.desc.width, t.desc.height, level);
    const std::vector<uint8_t> bytes = stored_level(t, level);
    std::vector<ImageF> layers;
    const size_t layer_bytes = bytes.size() / t.desc.layers;
    for (uint32_t l = 0; l < t.desc.layers; ++l)
        layers.push_back(
            decode_texels({bytes.data() + l * layer_bytes, layer_bytes}, e.width, e.height, t.desc.format));
    return layers;
}

// Every level of every layer, per layer (what reference_sample_patches takes).
std::vector<MipLevels> read_levels(const CudaMipmaps& t) {
    std::vector<MipLevels> images(t.desc.layers);
    for (uint32_t level = 0; level < t.desc.mip_levels(); ++level) {
        std::vector<ImageF> layers = read_level(t, level);
        for (uint32_t l = 0; l < t.desc.layers; ++l) images[l].push_back(std::move(layers[l]));
    }
    return images;
}

// Levels 1.. filled with 0xff bytes (NaN for floats, 1.0 for bytes): a texel the box
// kernel skips cannot pass.
void poison_levels(const CudaMipmaps& t) {
    for (uint32_t level = 1; level < t.desc.mip_levels(); ++level) {
        const Extent2D e = level_extent(t.desc.width, t.desc.height, level);
        const size_t texel = format_info(t.desc.format).texel_bytes();
        std::vector<uint8_t> poison(level_bytes(t.desc, level), 0xff);
        cudaMemcpy3DParms p{};
        p.srcPtr = cudaPitchedPtr{poison.data(), e.width * texel, e.width, e.height};
        p.dstArray = t.level(level);
        p.extent = cudaExtent{e.width, e.height, t.desc.layers};
        p.kind = cudaMemcpyHostToDevice;
        TVLM_CUDA_CHECK(cudaMemcpy3D(&p));
    }
}

// Random level 0 for every layer, as the format's bytes (layers one after another).
std::vector<uint8_t> random_frame(const TextureDesc& d, uint32_t seed, std::vector<ImageF>* images = nullptr) {
    std::vector<uint8_t> bytes;
    for (uint32_t l = 0; l < d.layers; ++l) {
        const ImageF image = random_image(d.width, d.height, d.format, seed + l);
        const std::vector<uint8_t> layer = encode_texels(image, d.format);
        bytes.insert(bytes.end(), layer.begin(), layer.end());
        if (images) images->push_back(image);
    }
    return bytes;
}

// One foveated layout per layer (fixations apart), sampled with the texture unit into a
// poisoned buffer; values against the reference on the texture's own levels.
void check_sampling(const CudaMipmaps& t, cudaStream_t stream, bool half = false) {
    std::vector<PatchLayout> per_image;
    for (uint32_t l = 0; l < t.desc.layers; ++l) {
        FoveatedParams p;
        p.fixations = {{0.2 + 0.25 * l, 0.7 - 0.2 * l}};
        p.budget = 90;
        per_image.push_back(foveated_layout(t.desc.width, t.desc.height, p).layout);
    }
    const PatchLayout layout = t.desc.layers > 1 ? batch_layouts(per_image) : per_image[0];
    const PatchOutput output{.channels = 4, .half = half};
    CudaPatchSampler sampler(layout, output);
    DeviceBuffer<unsigned char> out(output.bytes(layout));
    TVLM_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xff, out.bytes(), stream));  // NaN in both widths
    const TextureObject object = t.make_texture_object(sampler.sampler_desc());
    sampler.sample(t, object.get(), out.data(), out.bytes(), stream);
    std::vector<unsigned char> host(out.bytes());
    TVLM_CUDA_CHECK(cudaMemcpyAsync(host.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost, stream));
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<float> actual = output_values(host.data(), layout.output_values(4), half);
    const std::vector<float> expected = reference_sample_patches(layout, read_levels(t), t.desc.format, 4);
    CHECK(sample_mismatches(expected, actual, false, half) == 0);

    // A sampler borrowing records its caller keeps on the device (as Python does) writes
    // the same bytes.
    DeviceBuffer<gpu::PatchGpu> records(layout.patches.size());
    TVLM_CUDA_CHECK(cudaMemcpy(records.data(), layout.patches.data(), records.bytes(), cudaMemcpyHostToDevice));
    const CudaPatchSampler borrowing(layout, records.data());
    TVLM_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xff, out.bytes(), stream));
    borrowing.sample(t.desc, object.get(), {out.data(), out.bytes(), output}, stream);
    std::vector<unsigned char> borrowed(out.bytes());
    TVLM_CUDA_CHECK(cudaMemcpyAsync(borrowed.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost, stream));
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
    CHECK(borrowed == host);
}

size_t device_memory_used() {
    size_t free = 0, total = 0;
    TVLM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return total - free;
}

// The headless GL context on the EGL device of the current CUDA device; nullopt (the GL
// cases skip with the reason) only where the EGL/OpenGL libraries are not installed.
EglContext* gl_context() {
    static std::optional<EglContext> context;
    static bool tried = false;
    if (!tried) {
        tried = true;
        int device = 0;
        TVLM_CUDA_CHECK(cudaGetDevice(&device));
        try {
            context.emplace(EglContextDesc{.cuda_device = device});
        } catch (const Error& e) {
            if (std::string(e.what()).find("cannot load") == std::string::npos) throw;
            MESSAGE("SKIPPED the GL cases: " << e.what());
        }
    }
    return context ? &*context : nullptr;
}

}  // namespace

TEST_CASE("CUDA-only texture: box mips equal the reference, patches equal the reference on its levels") {
    const CudaStream stream = make_stream();
    for (Format format : kAllFormats)
        for (uint32_t layers : {1u, 3u}) {
            CAPTURE(format_info(format).name);
            CAPTURE(layers);
            const CudaArrayTexture texture = CudaArrayTexture::create({301, 203, layers, 0, format, false});
            std::vector<ImageF> bases;
            const std::vector<uint8_t> frame = random_frame(texture.desc(), 17 * layers, &bases);
            // The frame arrives in CUDA memory, as a decoder's output would.
            DeviceBuffer<uint8_t> device_frame(frame.size());
            TVLM_CUDA_CHECK(cudaMemcpy(device_frame.data(), frame.data(), frame.size(), cudaMemcpyHostToDevice));
            poison_levels(texture);
            copy_to_level0(texture, device_frame.data(), 301 * format_info(format).texel_bytes(), 0, layers,
                           stream.get());
            CudaBoxMips(texture).generate(stream.get());
            TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
            const std::vector<MipLevels> levels = read_levels(texture);
            for (uint32_t l = 0; l < layers; ++l) {
                CAPTURE(l);
                REQUIRE(encode_texels(levels[l][0], format) == encode_texels(bases[l], format));
                check_levels([&](uint32_t level) { return levels[l][level]; }, texture.desc().mip_levels(), 301, 203,
                             format, MipFilter::box);
            }
            if (format != Format::r32f) check_sampling(texture, stream.get(), layers == 3);
        }
}

// 512^2: the chain's last pass (levels 7-9) is the tail of the one before, and the patches
// read levels 0-3 only, so the graph runs that tail beside them (deferred_tail_level).
// 256x160: its chain has no such tail.
TEST_CASE(
    "A frame pipeline captured as a CUDA graph, relaunched with new frames, equals the steps launched one by one") {
    const CudaStream stream = make_stream();
    for (const Extent2D size : {Extent2D{256, 160}, Extent2D{512, 512}})
        for (Format format : {Format::rgba8_unorm, Format::rgba8_srgb, Format::rgba16f})
            for (uint32_t layers : {1u, 3u}) {
                CAPTURE(size.width);
                CAPTURE(format_info(format).name);
                CAPTURE(layers);
                const TextureDesc desc{size.width, size.height, layers, 0, format, false};
                const size_t row_bytes = size.width * format_info(format).texel_bytes();
                std::vector<PatchLayout> per_image;
                for (uint32_t l = 0; l < layers; ++l) {
                    FoveatedParams p;
                    p.fixations = {{0.3 + 0.2 * l, 0.6}};
                    p.budget = 60;
                    per_image.push_back(foveated_layout(size.width, size.height, p).layout);
                }
                const PatchLayout layout = layers > 1 ? batch_layouts(per_image) : per_image[0];
                const CudaPatchSampler sampler(layout, {.channels = 3});
                const size_t out_bytes = PatchOutput{.channels = 3}.bytes(layout);
                // The graph's texture and output, and the same steps on their own texture.
                const CudaArrayTexture graph_texture = CudaArrayTexture::create(desc),
                                       eager_texture = CudaArrayTexture::create(desc);
                const CudaBoxMips graph_mips(graph_texture), eager_mips(eager_texture);
                if (size.width == 512) {  // the deferred tail is what this size tests
                    REQUIRE(graph_mips.deferred_tail_level() == 7);
                    REQUIRE(layout.levels_needed <= 7);
                } else {
                    REQUIRE(graph_mips.deferred_tail_level() == desc.mip_levels());
                }
                const TextureObject graph_object = graph_texture.mipmaps().make_texture_object(sampler.sampler_desc());
                const TextureObject eager_object = eager_texture.mipmaps().make_texture_object(sampler.sampler_desc());
                DeviceBuffer<unsigned char> graph_out(out_bytes), eager_out(out_bytes);
                // Three frames: two buffers, the first rewritten in place for the third.
                DeviceBuffer<uint8_t> a(level_bytes(desc, 0)), b(level_bytes(desc, 0));
                const auto fill = [&](DeviceBuffer<uint8_t>& buffer, uint32_t seed) {
                    const std::vector<uint8_t> frame = random_frame(desc, seed);
                    TVLM_CUDA_CHECK(cudaMemcpy(buffer.data(), frame.data(), frame.size(), cudaMemcpyHostToDevice));
                };
                fill(a, 1);
                CudaFrameGraph graph({graph_texture.mipmaps(), &graph_mips, &sampler, graph_object.get(), a.data(),
                                      row_bytes, graph_out.data(), out_bytes});
                for (int frame = 0; frame < 3; ++frame) {
                    CAPTURE(frame);
                    DeviceBuffer<uint8_t>& source = frame == 1 ? b : a;
                    fill(source, 10 + uint32_t(frame));
                    TVLM_CUDA_CHECK(cudaMemsetAsync(graph_out.data(), 0xff, out_bytes, stream.get()));
                    poison_levels(graph_texture.mipmaps());
                    graph.launch(stream.get(), source.data());
                    copy_to_level0(eager_texture, source.data(), row_bytes, 0, layers, stream.get());
                    eager_mips.generate(stream.get());
                    sampler.sample(eager_texture, eager_object.get(), eager_out.data(), out_bytes, stream.get());
                    std::vector<unsigned char> got(out_bytes), want(out_bytes);
                    TVLM_CUDA_CHECK(
                        cudaMemcpyAsync(got.data(), graph_out.data(), out_bytes, cudaMemcpyDeviceToHost, stream.get()));
                    TVLM_CUDA_CHECK(cudaMemcpyAsync(want.data(), eager_out.data(), out_bytes, cudaMemcpyDeviceToHost,
                                                    stream.get()));
                    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
                    CHECK(got == want);  // the same kernels on the same frame: the same bytes
                    const std::vector<MipLevels> graph_levels = read_levels(graph_texture.mipmaps());
                    const std::vector<MipLevels> eager_levels = read_levels(eager_texture.mipmaps());
                    for (uint32_t l = 0; l < layers; ++l)
                        for (uint32_t level = 0; level < desc.mip_levels(); ++level)
                            CHECK(graph_levels[l][level].texels == eager_levels[l][level].texels);
                }
                CHECK(graph.kept() == 2);  // one graph per frame address
                // generate_from reads CUDA memory only, with whole rows.
                const std::vector<uint8_t> host_frame = random_frame(desc, 3);
                CHECK_THROWS_WITH_AS(graph_mips.generate_from(host_frame.data(), row_bytes, stream.get()),
                                     doctest::Contains("CUDA device memory"), Error);
                CHECK_THROWS_WITH_AS(graph_mips.generate_from(a.data(), row_bytes - 1, stream.get()),
                                     doctest::Contains("rows"), Error);
                CHECK_THROWS_AS(CudaFrameGraph({graph_texture.mipmaps(), &graph_mips, &sampler, graph_object.get(),
                                                a.data(), row_bytes, graph_out.data(), out_bytes - 4}),
                                Error);
                CHECK_THROWS_AS(CudaFrameGraph({graph_texture.mipmaps(), &graph_mips, &sampler, graph_object.get(),
                                                nullptr, row_bytes, graph_out.data(), out_bytes}),
                                Error);
            }
}

TEST_CASE("generate_from reads the frame in the chain's first pass: every level as a copy, then the chain") {
    const CudaStream stream = make_stream();
    struct Case {
        uint32_t width, height, layers;
    };
    // Whole 64x64 tiles; partial tiles and a width of 4n + 2 texels (the edge's single
    // texels); a batch; a square whose level 1 goes to the one-block tail (no first pass
    // to fuse into); odd sides (the general kernels): the copy stays apart.
    for (Format format : {Format::rgba8_unorm, Format::rgba8_srgb, Format::rgba16f})
        for (const Case c :
             {Case{256, 128, 1}, Case{202, 118, 1}, Case{130, 66, 3}, Case{128, 128, 1}, Case{97, 64, 1}})
            for (size_t pad : {size_t{0}, size_t{16}, size_t{4}}) {  // 4: rows off 16-byte boundaries
                CAPTURE(format_info(format).name);
                CAPTURE(c.width);
                CAPTURE(c.layers);
                CAPTURE(pad);
                const TextureDesc desc{c.width, c.height, c.layers, 0, format, false};
                const size_t texel = format_info(format).texel_bytes(), tight = c.width * texel,
                             row_bytes = tight + pad;
                const std::vector<uint8_t> frame = random_frame(desc, 40 + c.width);
                std::vector<uint8_t> pitched(row_bytes * c.height * c.layers, 0xee);
                for (size_t row = 0; row < size_t{c.height} * c.layers; ++row)
                    std::memcpy(pitched.data() + row * row_bytes, frame.data() + row * tight, tight);
                DeviceBuffer<uint8_t> device_frame(pitched.size());
                TVLM_CUDA_CHECK(
                    cudaMemcpy(device_frame.data(), pitched.data(), pitched.size(), cudaMemcpyHostToDevice));
                const CudaArrayTexture fused = CudaArrayTexture::create(desc), eager = CudaArrayTexture::create(desc);
                const CudaBoxMips fused_mips(fused), eager_mips(eager);
                // Level 0 poisoned too: every texel of it must be written.
                {
                    const std::vector<uint8_t> poison(level_bytes(desc, 0), 0xff);
                    copy_to_level0(fused, poison.data(), tight, 0, c.layers, stream.get());
                }
                poison_levels(fused.mipmaps());
                fused_mips.generate_from(device_frame.data(), row_bytes, stream.get());
                copy_to_level0(eager, device_frame.data(), row_bytes, 0, c.layers, stream.get());
                eager_mips.generate(stream.get());
                TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
                const std::vector<MipLevels> got = read_levels(fused.mipmaps()), want = read_levels(eager.mipmaps());
                for (uint32_t l = 0; l < c.layers; ++l)
                    for (uint32_t level = 0; level < desc.mip_levels(); ++level) {
                        CAPTURE(level);
                        CHECK(encode_texels(got[l][level], format) == encode_texels(want[l][level], format));
                    }
                CHECK(encode_texels(got[0][0], format) ==
                      std::vector<uint8_t>(frame.begin(), frame.begin() + ptrdiff_t(tight * c.height)));
            }
}

TEST_CASE("PinnedStaging copies pageable frames to CUDA memory exactly, chunk by chunk, on several threads") {
    const CudaStream stream = make_stream();
    PinnedStaging staging(size_t{1} << 20, 3, 3);
    CHECK(staging.threads() == 3);
    for (size_t bytes :
         {size_t{0}, size_t{1}, size_t{1000}, (size_t{1} << 20) - 1, size_t{1} << 20, (size_t{20} << 20) + 13}) {
        CAPTURE(bytes);
        std::vector<uint8_t> frame(bytes);
        for (size_t i = 0; i < bytes; ++i) frame[i] = uint8_t((i * 2654435761u) >> 24);
        DeviceBuffer<uint8_t> device(bytes + 64);
        // Poison, and a guard after the end, in the copies' stream: a plain cudaMemset runs in
        // the legacy stream, unordered with a non-blocking one (under a sanitizer it landed
        // after the copy).
        TVLM_CUDA_CHECK(cudaMemsetAsync(device.data(), 0xab, bytes + 64, stream.get()));
        staging.copy(device.data(), frame.data(), bytes, stream.get());
        std::fill(frame.begin(), frame.end(), uint8_t{0});  // the source may be reused once copy() returns...
        std::vector<uint8_t> back(bytes + 64);
        TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        TVLM_CUDA_CHECK(cudaMemcpy(back.data(), device.data(), bytes + 64, cudaMemcpyDeviceToHost));
        size_t bad = 0;
        for (size_t i = 0; i < bytes; ++i) bad += back[i] != uint8_t((i * 2654435761u) >> 24);  // ...the copy has it
        CHECK(bad == 0);
        CHECK(std::all_of(back.begin() + std::ptrdiff_t(bytes), back.end(), [](uint8_t b) { return b == 0xab; }));
    }
    CHECK_THROWS_AS(staging.copy(nullptr, &staging, 4, stream.get()), Error);
    CHECK_THROWS_AS(PinnedStaging(0), Error);
}

TEST_CASE("PinnedStaging made and destroyed 200 times: threads joined, pinned and device memory flat [soak]") {
    const CudaStream stream = make_stream();
    DeviceBuffer<uint8_t> device(size_t{3} << 20);
    const std::vector<uint8_t> frame(size_t{3} << 20, 7);
    { PinnedStaging warm(size_t{1} << 20, 2, 2); }
    const auto threads = [] {
        return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                             std::filesystem::directory_iterator());
    };
    const auto threads_before = threads();
    const size_t used = device_memory_used();
    for (int i = 0; i < 200; ++i) {
        PinnedStaging staging(size_t{1} << 20, 2, 2);
        staging.copy(device.data(), frame.data(), frame.size(), stream.get());
    }
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    CHECK(device_memory_used() <= used + (size_t{4} << 20));
    CHECK(threads() == threads_before);
}

TEST_CASE("write_texels writes every texel of its block once and nothing else, on every path of its kernel") {
    // 200 x 75: runs of 64 texels with a partial one, and an odd height (a warp's row pair
    // half past the end). Blocks: whole, and inside (x on a word boundary, so uint8 planar
    // rows still take the word loads; x off it, texel loads). Tensors: uint8 planar (word
    // loads), uint8 channels last and float32 planar (texel loads) into RGBA8 and RGBA16F.
    const CudaStream stream = make_stream();
    constexpr uint32_t kW = 200, kH = 75, kLayers = 2;
    struct Case {
        Format format;
        TensorDtype dtype;
        bool planar;
        uint32_t channels;
        TexelBlock block;
    };
    const Case cases[] = {
        {Format::rgba8_unorm, TensorDtype::u8, true, 3, {0, 0, kW, kH, 0, kLayers}},
        {Format::rgba8_unorm, TensorDtype::u8, true, 4, {8, 3, 130, 37, 1, 1}},
        {Format::rgba8_unorm, TensorDtype::u8, true, 4, {5, 2, 150, 70, 0, 2}},
        {Format::rgba8_unorm, TensorDtype::u8, false, 4, {0, 1, kW, 74, 0, kLayers}},
        {Format::rgba16f, TensorDtype::f32, true, 4, {3, 0, 197, kH, 0, kLayers}},
        {Format::rgba16f, TensorDtype::f32, true, 3, {0, 0, kW, kH, 0, kLayers}},
    };
    for (const Case& c : cases) {
        CAPTURE(format_info(c.format).name);
        CAPTURE(c.planar);
        CAPTURE(c.channels);
        CAPTURE(c.block.x);
        const TextureDesc desc{kW, kH, kLayers, 1, c.format, false};
        const CudaArrayTexture texture = CudaArrayTexture::create(desc);
        const std::vector<uint8_t> poison(level_bytes(desc, 0), 0xff);
        copy_to_level0(texture.mipmaps(), poison.data(), size_t{kW} * format_info(c.format).texel_bytes(), 0, kLayers,
                       stream.get());
        // The tensor: level-sized (element (b, c, y, x) is texel (x, y); the block picks the
        // same rectangle of both), values k / 256 (exact in binary16) or bytes.
        const TexelBlock& b = c.block;
        const size_t values = size_t{b.layers} * c.channels * kH * kW;
        std::vector<float> value(values);
        std::vector<uint8_t> tensor_bytes(values * element_bytes(c.dtype));
        for (size_t i = 0; i < values; ++i) {
            const uint32_t byte = uint32_t(i * 2654435761u) >> 24;
            value[i] = c.dtype == TensorDtype::u8 ? float(byte) : float(byte) / 256.0f;
            if (c.dtype == TensorDtype::u8) tensor_bytes[i] = uint8_t(byte);
            else std::memcpy(tensor_bytes.data() + 4 * i, &value[i], 4);
        }
        const int64_t plane = int64_t(kW) * kH;
        const TensorView view{nullptr,
                              c.dtype,
                              plane * c.channels,
                              c.planar ? plane : 1,
                              c.planar ? int64_t(kW) : int64_t(kW) * c.channels,
                              c.planar ? 1 : c.channels,
                              c.channels};
        const auto at = [&](uint32_t layer, uint32_t ch, uint32_t y, uint32_t x) {
            return value[size_t(layer * view.stride_b + ch * view.stride_c + y * view.stride_y + x * view.stride_x)];
        };
        DeviceBuffer<uint8_t> device(tensor_bytes.size());
        TVLM_CUDA_CHECK(cudaMemcpy(device.data(), tensor_bytes.data(), tensor_bytes.size(), cudaMemcpyHostToDevice));
        TensorView on_device = view;
        on_device.data = device.data();
        const SurfaceObject level0 = texture.mipmaps().make_surface(0);
        write_texels(on_device, level0.get(), true, surface_texel(c.format), b, stream.get());
        TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        const std::vector<uint8_t> got = stored_level(texture.mipmaps(), 0);
        const std::vector<ImageF> layers = read_level(texture.mipmaps(), 0);
        size_t wrong = 0, poisoned = 0;
        for (uint32_t l = 0; l < kLayers; ++l)
            for (uint32_t y = 0; y < kH; ++y)
                for (uint32_t x = 0; x < kW; ++x) {
                    const bool inside = l >= b.first_layer && l < b.first_layer + b.layers && x >= b.x &&
                                        x < b.x + b.width && y >= b.y && y < b.y + b.height;
                    const size_t byte = ((size_t{l} * kH + y) * kW + x) * format_info(c.format).texel_bytes();
                    if (!inside) {
                        poisoned += std::all_of(got.begin() + ptrdiff_t(byte),
                                                got.begin() + ptrdiff_t(byte + format_info(c.format).texel_bytes()),
                                                [](uint8_t v) { return v == 0xff; });
                        continue;
                    }
                    for (uint32_t ch = 0; ch < 4; ++ch) {
                        const float opaque = c.dtype == TensorDtype::u8 ? 255.0f : 1.0f;
                        float want = ch < c.channels ? at(l - b.first_layer, ch, y, x) : opaque;
                        if (c.dtype == TensorDtype::u8) want /= 255.0f;  // decode_texels gives RGBA8 as byte / 255
                        wrong += layers[l].at(x, y, ch) != want;
                    }
                }
        CHECK(wrong == 0);
        CHECK(poisoned == size_t{kLayers} * kW * kH - size_t{b.layers} * b.width * b.height);
    }
}

TEST_CASE("copy_level_rows refuses rows it cannot copy in 16-byte chunks, launching nothing") {
    DeviceBuffer<uint8_t> frame(4096);
    const auto* base = frame.data();
    const LevelCopy good{base, 256, 256, 4, 0, false, 0, 1};
    CHECK(copies_in_chunks(good));
    for (LevelCopy bad :
         {LevelCopy{base + 4, 256, 256, 4, 0, false, 0, 1}, LevelCopy{base, 260, 256, 4, 0, false, 0, 1},
          LevelCopy{base, 256, 248, 4, 0, false, 0, 1}, LevelCopy{base, 256, 256, 0, 0, false, 0, 1},
          LevelCopy{base, 128, 256, 4, 0, false, 0, 1}, LevelCopy{nullptr, 256, 256, 4, 0, false, 0, 1}}) {
        CHECK_FALSE(copies_in_chunks(bad));
        CHECK_THROWS_WITH_AS(copy_level_rows(bad, nullptr), doctest::Contains("16-byte"), Error);
    }
}

TEST_CASE("generate_from refuses 1-channel textures: their frames go in by copy_to_level0") {
    const CudaArrayTexture texture = CudaArrayTexture::create({64, 64, 1, 0, Format::r32f, false});
    DeviceBuffer<float> frame(64 * 64);
    CHECK_THROWS_WITH_AS(CudaBoxMips(texture).generate_from(frame.data(), 64 * 4, nullptr),
                         doctest::Contains("copy_to_level0"), Error);
}

TEST_CASE(
    "CUDA point samples at per-sample LOD (the benchmark's job) equal the reference: texture unit, grouped "
    "by level or not, and software filtering") {
    const CudaStream stream = make_stream();
    const CudaArrayTexture texture = CudaArrayTexture::create({256, 192, 1, 0, Format::rgba8_unorm, false});
    const std::vector<uint8_t> frame = random_frame(texture.desc(), 5);
    DeviceBuffer<uint8_t> device_frame(frame.size());
    TVLM_CUDA_CHECK(cudaMemcpy(device_frame.data(), frame.data(), frame.size(), cudaMemcpyHostToDevice));
    copy_to_level0(texture, device_frame.data(), 256 * 4, 0, 1, stream.get());
    CudaBoxMips(texture).generate(stream.get());
    const TextureObject object = texture.mipmaps().make_texture_object();
    const PyramidCopy pyramid = PyramidCopy::copy(texture, stream.get());
    // read_levels copies on the legacy stream, which does not wait for a non-blocking one
    // (racecheck's slower kernels showed the stale levels).
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    const std::vector<MipLevels> levels = read_levels(texture);
    constexpr uint32_t kCount = 5000;  // not a multiple of the block
    DeviceBuffer<float4> out(kCount);
    for (uint32_t tiles : {0u, 1u}) {
        CAPTURE(tiles);
        const gpu::PointSampleParams points{kCount, 8.0f, 11u, tiles, 1.0f / 256};
        std::vector<float> expected;
        for (uint32_t i = 0; i < kCount; ++i) {
            const gpu::PointSample q = gpu::point_sample(points, i);
            for (double c : reference_trilinear(levels[0], Format::rgba8_unorm, q.u, q.v, q.lod))
                expected.push_back(static_cast<float>(c));
        }
        const auto run = [&](auto launch) {
            TVLM_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xff, out.bytes(), stream.get()));  // NaN
            launch();
            std::vector<float> actual(4 * size_t{kCount});
            TVLM_CUDA_CHECK(
                cudaMemcpyAsync(actual.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost, stream.get()));
            TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
            CHECK(sample_mismatches(expected, actual, false, false) == 0);
            return actual;
        };
        const auto texture_unit = [&](bool grouped) {
            return run([&] { sample_points({object.get(), points, out.data(), grouped}, stream.get()); });
        };
        const std::vector<float> plain = texture_unit(false);
        CHECK(texture_unit(true) == plain);  // the same samples, in sample order
        run([&] { sample_points_software(pyramid.pyramid(), points, out.data(), stream.get()); });
    }
}

TEST_CASE("CUDA-only texture: bad sizes and copies are refused, nothing allocated or copied") {
    const CudaStream stream = make_stream();
    CHECK_THROWS_WITH_AS(CudaArrayTexture::create({0, 16, 1, 0, Format::rgba8_unorm, false}),
                         doctest::Contains("at least 1"), Error);
    CHECK_THROWS_WITH_AS(CudaArrayTexture::create({1u << 20, 16, 1, 0, Format::rgba8_unorm, false}),
                         doctest::Contains("maxTexture2DMipmap"), Error);
    CHECK_THROWS_WITH_AS(CudaArrayTexture::create({16, 16, 1, 9, Format::rgba8_unorm, false}),
                         doctest::Contains("levels"), Error);
    CHECK_THROWS_WITH_AS(CudaArrayTexture::create({16, 16, 1, 0, Format::rgba8_unorm, true}),
                         doctest::Contains("nothing to export"), Error);
    const CudaArrayTexture texture = CudaArrayTexture::create({64, 32, 2, 0, Format::rgba16f, false});
    std::vector<uint8_t> zeros(level_bytes(texture.desc(), 0), 0);
    copy_to_level0(texture, zeros.data(), 64 * 8, 0, 2, stream.get());
    std::vector<uint8_t> frame(zeros.size(), 0x3c);
    CHECK_THROWS_WITH_AS(copy_to_level0(texture, nullptr, 64 * 8, 0, 2, stream.get()), doctest::Contains("null"),
                         Error);
    CHECK_THROWS_WITH_AS(copy_to_level0(texture, frame.data(), 64 * 8 - 1, 0, 2, stream.get()),
                         doctest::Contains("a row of the 64-texel rgba16f level has 512 bytes"), Error);
    CHECK_THROWS_WITH_AS(copy_to_level0(texture, frame.data(), 64 * 8, 1, 2, stream.get()),
                         doctest::Contains("texture with 2 layers"), Error);
    CHECK_THROWS_WITH_AS(copy_to_level0(texture, frame.data(), 64 * 8, 0, 0, stream.get()),
                         doctest::Contains("at least one layer"), Error);
    CHECK_THROWS_WITH_AS(texture.mipmaps().make_surface(7), doctest::Contains("has 7 levels"), Error);
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    for (const ImageF& layer : read_level(texture, 0))  // the refused copies changed nothing
        for (float v : layer.texels) REQUIRE(v == 0.0f);
}

TEST_CASE("CudaPatchSampler refuses a target or texture it cannot serve, launching nothing") {
    const CudaStream stream = make_stream();
    const CudaArrayTexture texture = CudaArrayTexture::create({64, 48, 1, 0, Format::rgba8_unorm, false});
    const PatchLayout layout = level_grid_layout(64, 48, 16, 0);
    const CudaPatchSampler sampler(layout, PatchOutput{.channels = 3});
    const TextureObject object = texture.mipmaps().make_texture_object(sampler.sampler_desc());
    const PatchOutput output{.channels = 3};
    DeviceBuffer<unsigned char> out(output.bytes(layout));
    TVLM_CUDA_CHECK(cudaMemsetAsync(out.data(), 0x7f, out.bytes(), stream.get()));
    const TextureDesc& d = texture.desc();
    CHECK_THROWS_WITH_AS(sampler.sample(d, object.get(), {out.data(), out.bytes() - 1, output}, stream.get()),
                         doctest::Contains(("needs " + std::to_string(out.bytes())).c_str()), Error);
    CHECK_THROWS_WITH_AS(sampler.sample(d, object.get(), {out.data(), out.bytes(), {5, false}}, stream.get()),
                         doctest::Contains("3 or 4 channels, not 5"), Error);
    CHECK_THROWS_WITH_AS(sampler.sample(d, object.get(), {nullptr, out.bytes(), output}, stream.get()),
                         doctest::Contains("null pointer"), Error);
    TextureDesc smaller = d;
    smaller.width = 32;
    CHECK_THROWS_WITH_AS(sampler.sample(smaller, object.get(), {out.data(), out.bytes(), output}, stream.get()),
                         doctest::Contains("images but the texture is 32x48"), Error);
    CHECK_THROWS_WITH_AS(CudaPatchSampler(layout, static_cast<const gpu::PatchGpu*>(nullptr)),
                         doctest::Contains("null pointer"), Error);
    std::vector<unsigned char> host(out.bytes());
    TVLM_CUDA_CHECK(cudaMemcpyAsync(host.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost, stream.get()));
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    CHECK(std::all_of(host.begin(), host.end(), [](unsigned char b) { return b == 0x7f; }));
}

TEST_CASE("CUDA-only texture: 2000 textures with mips and samplers created and destroyed, device memory flat [soak]") {
    const CudaStream stream = make_stream();
    const auto cycle = [&] {
        const CudaArrayTexture t = CudaArrayTexture::create({512, 256, 2, 0, Format::rgba8_unorm, false});
        const CudaBoxMips mips(t);
        mips.generate(stream.get());
        const TextureObject object = t.mipmaps().make_texture_object();
        TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    };
    cycle();
    const size_t before = device_memory_used();
    for (int i = 0; i < 2000; ++i) cycle();
    CHECK(device_memory_used() <= before + (size_t{2} << 20));
}

TEST_CASE("GL texture in CUDA: mapped per frame, patches equal the reference on glGenerateMipmap's levels") {
    EglContext* gl = gl_context();
    if (!gl) return;
    const CudaStream stream = make_stream();
    for (Format format : {Format::rgba8_unorm, Format::rgba16f, Format::rgba32f})
        for (uint32_t layers : {1u, 3u}) {
            CAPTURE(format_info(format).name);
            CAPTURE(layers);
            GlTexture texture = GlTexture::create(*gl, {320, 240, layers, 0, format, false});
            CudaGlTexture cuda(texture);
            for (uint32_t frame = 0; frame < 3; ++frame) {  // new content each frame, map per frame
                CAPTURE(frame);
                const std::vector<uint8_t> texels = random_frame(texture.desc(), 100 * frame + layers);
                texture.upload_texels(texels.data(), 0, layers);
                texture.generate_mips();
                const CudaMipmaps mapped = cuda.map(stream.get());     // orders the GL work before
                TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));  // for the host copies below
                CHECK(read_level(mapped, 0)[layers - 1].texels ==
                      decode_texels({texels.data() + (layers - 1) * level_bytes(mapped.desc, 0) / layers,
                                     level_bytes(mapped.desc, 0) / layers},
                                    320, 240, format)
                          .texels);
                check_sampling(mapped, stream.get(), format == Format::rgba16f);
                // Objects are made once per mapped array and sampler, then reused.
                const cudaTextureObject_t object = cuda.texture_object(mapped);
                CHECK(cuda.texture_object(mapped) == object);
                CHECK(cuda.texture_object(mapped, CudaSamplerDesc::point()) != object);
                cuda.unmap(stream.get());
            }
        }
}

TEST_CASE("GL texture in CUDA: kept mapped across frames, GL writes ordered by host waits") {
    EglContext* gl = gl_context();
    if (!gl) return;
    const CudaStream stream = make_stream();
    GlTexture texture = GlTexture::create(*gl, {256, 256, 1, 0, Format::rgba8_unorm, false});
    CudaGlTexture cuda(texture);
    const CudaMipmaps mapped = cuda.map(stream.get());
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    for (uint32_t frame = 0; frame < 3; ++frame) {
        CAPTURE(frame);
        const std::vector<uint8_t> texels = random_frame(texture.desc(), 7 + frame);
        texture.upload_texels(texels.data(), 0, 1);
        texture.generate_mips();
        gl->gl().glFinish();                   // GL done before CUDA reads; CUDA done (below) before GL writes again
        check_sampling(mapped, stream.get());  // synchronises the stream
        CHECK(read_level(mapped, 0)[0].texels == decode_texels(texels, 256, 256, Format::rgba8_unorm).texels);
    }
    cuda.unmap(stream.get());
}

TEST_CASE("GL texture in CUDA: CudaBoxMips writes the levels of a mapped texture, equal to the reference") {
    EglContext* gl = gl_context();
    if (!gl) return;
    const CudaStream stream = make_stream();
    for (Format format : {Format::rgba8_unorm, Format::rgba16f, Format::r32f}) {
        CAPTURE(format_info(format).name);
        GlTexture texture = GlTexture::create(*gl, {333, 222, 2, 0, format, false});
        std::vector<ImageF> bases;
        const std::vector<uint8_t> texels = random_frame(texture.desc(), 3, &bases);
        texture.upload_texels(texels.data(), 0, 2);
        CudaGlTexture cuda(texture, CudaGlAccess::read_write);
        const CudaMipmaps mapped = cuda.map(stream.get());
        TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));  // the poison is copied outside the stream
        poison_levels(mapped);
        CudaBoxMips(mapped).generate(stream.get());
        cuda.unmap(stream.get());
        TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        for (uint32_t l = 0; l < 2; ++l) {  // read back through GL: what GL users then see
            CAPTURE(l);
            check_levels([&](uint32_t level) { return texture.readback(level, l); }, texture.levels(), 333, 222, format,
                         MipFilter::box);
        }
    }
}

TEST_CASE("GL texture in CUDA: sRGB, double maps and stray unmaps are refused with what to do") {
    EglContext* gl = gl_context();
    if (!gl) return;
    const CudaStream stream = make_stream();
    GlTexture srgb = GlTexture::create(*gl, {16, 16, 1, 0, Format::rgba8_srgb, false});
    CHECK_THROWS_WITH_AS(CudaGlTexture{srgb}, doctest::Contains("cannot register sRGB"), Error);
    GlTexture texture = GlTexture::create(*gl, {16, 16, 1, 0, Format::rgba8_unorm, false});
    CudaGlTexture cuda(texture);
    CHECK_THROWS_WITH_AS(cuda.unmap(stream.get()), doctest::Contains("not mapped"), Error);
    const CudaMipmaps mapped = cuda.map(stream.get());
    cuda.unmap(stream.get());
    CHECK_THROWS_WITH_AS(cuda.texture_object(mapped), doctest::Contains("map() it first"), Error);
    cuda.map(stream.get());
    CHECK_THROWS_WITH_AS(cuda.map(stream.get()), doctest::Contains("already mapped"), Error);
    cuda.unmap(stream.get());
    CudaGlTexture moved = std::move(cuda);
    CHECK_THROWS_WITH_AS(cuda.map(stream.get()), doctest::Contains("unregistered"), Error);
    CHECK(!moved.mapped());
    std::vector<uint8_t> frame(16 * 16 * 4, 1);
    CHECK_THROWS_WITH_AS(texture.upload_texels(frame.data(), 1, 1), doctest::Contains("texture with 1 layers"), Error);
    CHECK_THROWS_WITH_AS(texture.upload_texels(nullptr, 0, 1), doctest::Contains("null"), Error);
}

TEST_CASE("GL texture in CUDA: 1000 textures registered, mapped, unmapped and destroyed; memory and fds flat [soak]") {
    EglContext* gl = gl_context();
    if (!gl) return;
    const CudaStream stream = make_stream();
    const auto cycle = [&] {
        GlTexture texture = GlTexture::create(*gl, {256, 256, 4, 0, Format::rgba8_unorm, false});
        CudaGlTexture cuda(texture);
        const CudaMipmaps mapped = cuda.map(stream.get());
        const TextureObject object = mapped.make_texture_object();
        cuda.unmap(stream.get());
        TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    };
    cycle();
    gl->gl().glFinish();
    const size_t before = device_memory_used();
    const auto fds = open_fds();
    for (int i = 0; i < 1000; ++i) cycle();
    gl->gl().glFinish();
    CHECK(device_memory_used() <= before + (size_t{8} << 20));
    CHECK(new_fds(fds, open_fds()) == "");
}
