// Vulkan -> CUDA interop on the NVIDIA machine: content of every level through CUDA's
// texture unit, ordering of 2000 frames without host waits, lifetime, bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/textures/color.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_handle.h"
#include "interop/cuda_device.h"
#include "interop/cuda_link.h"
#include "cuda/device_buffer.h"
#include "engine/core/device_memory.h"
#include "engine/error.h"
#include "interop/textures/frame_ring.h"
#include "engine/mips/generate_mips.h"
#include "interop/textures/imported_texture.h"
#include "tests/open_fds.h"
#include "tests/random_image.h"
#include "interop/textures/texture_pool.h"
#include "cuda/sampling/texture_reads.h"
#include "engine/textures/transfer.h"
#include "tests/texture_compare.h"
#include "tests/vulkan_fixture.h"

using namespace tvlm;
using namespace tvlm::test;

namespace {

// The validated context on the GPU that CUDA sees, and its link (made once).
struct Interop {
    Context& context = shared_context();
    CudaLink& link() {
        static CudaLink l(context);
        return l;
    }
};

// Reads one level/layer through CUDA (texel centres, tex2DLod) into host floats.
std::vector<float> cuda_read(const TextureObject& object, const Texture& t, uint32_t level, uint32_t layer,
                             cudaStream_t stream) {
    const Extent2D e = t.extent(level);
    const int channels = static_cast<int>(format_info(t.desc().format).channels);
    DeviceBuffer<float> out(size_t{e.width} * e.height * static_cast<size_t>(channels));
    TVLM_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xff, out.bytes(), stream));  // poison: NaN
    read_level({object.get(), static_cast<int>(level), static_cast<int>(layer), t.desc().layers > 1,
                static_cast<int>(e.width), static_cast<int>(e.height), channels, out.data()},
               stream);
    TVLM_CUDA_CHECK(cudaGetLastError());
    std::vector<float> host(out.size());
    TVLM_CUDA_CHECK(cudaMemcpyAsync(host.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost, stream));
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
    return host;
}

// CUDA returns linear light for sRGB textures; everything else as stored.
bool cuda_matches(Format format, uint32_t channel, float stored, float cuda) {
    if (format_info(format).srgb && channel < 3)
        return texel_matches(format, true, stored, static_cast<float>(linear_to_srgb(cuda)), Weights::exact);
    if (format_info(format).component == ComponentType::u8)
        return std::fabs(stored - cuda) <= 1e-6f;  // byte/255 either way
    return stored == cuda;                         // f16 widened exactly, f32 as is
}

// Frame f of a ring's 64x64 RGBA8 textures: every texel stamped with f (its low 24 bits in
// RGB), uploaded, mips by the box or the blit filter in turn; `pixels` is the staging.
void write_stamped_frame(Context& context, FrameRing& ring, uint32_t f, std::vector<uint8_t>& pixels) {
    pixels.resize(64 * 64 * 4);
    for (size_t i = 0; i < pixels.size(); i += 4) {
        pixels[i] = static_cast<uint8_t>(f & 255u);
        pixels[i + 1] = static_cast<uint8_t>((f >> 8) & 255u);
        pixels[i + 2] = static_cast<uint8_t>((f >> 16) & 255u);
        pixels[i + 3] = 255;
    }
    Texture& texture = ring.begin_write(f);
    upload(context, texture, host_pixels(pixels, 64, 64));
    ring.end_write(f, generate_mips(context, texture, f % 2 ? MipFilter::box : MipFilter::blit));
}
// The negative controls' count: 4 frames checked against the next stamp, every texel of
// every level mismatching.
constexpr unsigned int kControlMismatches = 4u * (64 * 64 + 32 * 32 + 16 * 16 + 8 * 8 + 4 * 4 + 2 * 2 + 1);

// The GPU's free memory, for every process on it: run alone, or another process's
// allocations in the meantime read as this one's leak.
size_t cuda_free_memory() {
    size_t free = 0, total = 0;
    TVLM_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
}

}  // namespace

TEST_CASE_FIXTURE(VulkanFixture, "every level of every layer read by CUDA equals Vulkan's readback and the reference") {
    Interop interop;
    CudaLink& link = interop.link();
    const CudaStream stream = make_stream();
    struct Shape {
        uint32_t w, h, layers;
    };
    const Shape shapes[] = {{64, 48, 1}, {37, 23, 1}, {128, 16, 1}, {1, 33, 1}, {20, 12, 3}, {9, 6, 64}};
    for (Format format : kAllFormats)
        for (MipFilter filter : {MipFilter::blit, MipFilter::box})
            for (Shape s : shapes) {
                CAPTURE(format_info(format).name);
                CAPTURE(mip_filter_name(filter));
                CAPTURE(s.w);
                CAPTURE(s.h);
                CAPTURE(s.layers);
                ImportedTexture t = ImportedTexture::create(
                    context, TextureDesc::sampled_array(s.w, s.h, s.layers, format), CudaSamplerDesc::point());
                TextureObject trilinear = t.cuda.make_texture_object(CudaSamplerDesc::trilinear());
                for (uint32_t layer = 0; layer < s.layers; ++layer)
                    upload(context, t.vulkan, host_pixels(random_image(s.w, s.h, format, layer * 13 + s.w)),
                           {.layer = layer});
                link.cuda_wait(stream.get(), generate_mips(context, t.vulkan, filter));
                for (uint32_t layer = 0; layer < s.layers; ++layer)
                    for (uint32_t level = 0; level < t.vulkan.levels(); ++level) {
                        CAPTURE(layer);
                        CAPTURE(level);
                        const ImageF stored = readback_image(context, t.vulkan, level, layer);
                        if (level > 0) {  // Vulkan's level against the reference of its own previous level
                            const ImageF previous = readback_image(context, t.vulkan, level - 1, layer);
                            const ImageF expected = reference_downsample(previous, t.vulkan.extent(level), filter,
                                                                         format);
                            const Weights w = filter == MipFilter::blit ? Weights::hardware : Weights::exact;
                            const bool exact = filter == MipFilter::box && format == Format::rgba8_unorm &&
                                               exact_ratio({previous.width, previous.height}, t.vulkan.extent(level));
                            CHECK(mismatches(expected, stored, format, w, exact) == 0);
                        }
                        for (const TextureObject* object : {&t.object, &trilinear}) {
                            const std::vector<float> cuda = cuda_read(*object, t.vulkan, level, layer, stream.get());
                            size_t bad = 0;
                            for (size_t i = 0; i < cuda.size(); ++i)
                                bad += !cuda_matches(format, static_cast<uint32_t>(i % stored.channels),
                                                     stored.texels[i], cuda[i]);
                            CHECK_MESSAGE(bad == 0, bad, " values differ (",
                                          object == &t.object ? "point" : "trilinear", ")");
                        }
                    }
            }
}

TEST_CASE_FIXTURE(VulkanFixture,
                  "2000 frames through a ring: CUDA never sees a stale or torn frame, no host waits [soak]") {
    Interop interop;
    CudaLink& link = interop.link();
    const CudaStream stream = make_stream();
    uint32_t slots = 3, max_slots = 0, batch = 1;  // max_slots 0: fixed
    SUBCASE("a fixed ring of 3 slots") {}
    SUBCASE("an elastic ring of 3 to 64 slots") { max_slots = 64; }
    // Batches: one CUDA wait (for the latest frame's value) and one release per batch.
    SUBCASE("a fixed ring of 8 slots, read in batches of 8") {
        slots = 8;
        batch = 8;
    }
    SUBCASE("an elastic ring of 3 to 64 slots, read in batches of 5") {
        max_slots = 64;
        batch = 5;
    }
    FrameRing ring(link, TextureDesc::sampled_2d(64, 64, Format::rgba8_unorm), slots, CudaSamplerDesc::point(),
                   max_slots);
    DeviceBuffer<unsigned int> mismatches(2);
    TVLM_CUDA_CHECK(cudaMemsetAsync(mismatches.data(), 0, mismatches.bytes(), stream.get()));
    std::vector<uint8_t> pixels;
    const int levels = 7;
    constexpr uint32_t kFrames = 2000;
    for (uint32_t first = 0; first < kFrames; first += batch) {
        const uint32_t count = std::min(batch, kFrames - first);
        for (uint32_t f = first; f < first + count; ++f) write_stamped_frame(context, ring, f, pixels);
        const std::vector<cudaTextureObject_t> objects = batch == 1 ? std::vector{ring.begin_read(first, stream.get())}
                                                                    : ring.begin_read(first, count, stream.get());
        REQUIRE(objects.size() == count);
        for (uint32_t f = first; f < first + count; ++f) {
            const cudaTextureObject_t object = objects[f - first];
            count_stamp_mismatches({object, 64, 64, levels, f, mismatches.data()}, stream.get());
            // Negative control: the same frame checked against the next stamp must mismatch.
            if (f % 500 == 0)
                count_stamp_mismatches({object, 64, 64, levels, f + 1, mismatches.data() + 1}, stream.get());
        }
        if (batch == 1) ring.end_read(first, stream.get());
        else ring.end_read(first, count, stream.get());
    }
    TVLM_CUDA_CHECK(cudaGetLastError());
    unsigned int counts[2] = {};
    TVLM_CUDA_CHECK(cudaMemcpyAsync(counts, mismatches.data(), sizeof counts, cudaMemcpyDeviceToHost, stream.get()));
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    CHECK(counts[0] == 0);
    CHECK(counts[1] == kControlMismatches);
    context.queue().wait_all();
    MESSAGE("ring slots at the end: ", ring.slots());
    CHECK(ring.slots() >= slots);
    CHECK(ring.slots() <= (max_slots ? max_slots : slots));
}

// The Vulkan side on this thread, the CUDA side on another, as a renderer and a model run:
// every frame's stamp read by CUDA is that frame's. The fixed ring makes the producer wait
// for the consumer's end_read; the consumer waits for frames not written yet.
TEST_CASE_FIXTURE(VulkanFixture,
                  "2000 frames from a producer thread to a consumer thread: no stale or torn frame [soak]") {
    Interop interop;
    CudaLink& link = interop.link();
    uint32_t slots = 3, max_slots = 0, batch = 1;  // max_slots 0: fixed
    SUBCASE("a fixed ring of 3 slots") {}
    SUBCASE("an elastic ring of 3 to 64 slots") { max_slots = 64; }
    // The consumer takes batches: it waits on the host until the batch's last frame is
    // written; the fixed ring holds the producer at most two batches ahead.
    SUBCASE("a fixed ring of 8 slots, read in batches of 4") {
        slots = 8;
        batch = 4;
    }
    FrameRing ring(link, TextureDesc::sampled_2d(64, 64, Format::rgba8_unorm), slots, CudaSamplerDesc::point(),
                   max_slots);
    DeviceBuffer<unsigned int> mismatches(2);
    TVLM_CUDA_CHECK(cudaMemset(mismatches.data(), 0, mismatches.bytes()));
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());  // zeroed before the consumer's own stream counts into it
    const int levels = 7;
    constexpr uint32_t kFrames = 2000;
    std::exception_ptr consumer_failure;
    std::thread consumer([&] {
        try {
            TVLM_CUDA_CHECK(cudaSetDevice(link.cuda_device()));
            const CudaStream stream = make_stream();
            for (uint32_t first = 0; first < kFrames; first += batch) {
                const uint32_t count = std::min(batch, kFrames - first);
                const std::vector<cudaTextureObject_t> objects = ring.begin_read(first, count, stream.get());
                for (uint32_t f = first; f < first + count; ++f) {
                    const cudaTextureObject_t object = objects[f - first];
                    count_stamp_mismatches({object, 64, 64, levels, f, mismatches.data()}, stream.get());
                    if (f % 500 == 0)  // negative control: the next frame's stamp must mismatch
                        count_stamp_mismatches({object, 64, 64, levels, f + 1, mismatches.data() + 1}, stream.get());
                }
                ring.end_read(first, count, stream.get());
            }
            TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        } catch (...) { consumer_failure = std::current_exception(); }
    });
    std::vector<uint8_t> pixels;
    std::exception_ptr producer_failure;
    try {
        for (uint32_t f = 0; f < kFrames; ++f) { write_stamped_frame(context, ring, f, pixels); }
    } catch (...) { producer_failure = std::current_exception(); }
    consumer.join();
    if (producer_failure) std::rethrow_exception(producer_failure);
    if (consumer_failure) std::rethrow_exception(consumer_failure);
    unsigned int counts[2] = {};
    TVLM_CUDA_CHECK(cudaMemcpy(counts, mismatches.data(), sizeof counts, cudaMemcpyDeviceToHost));
    CHECK(counts[0] == 0);
    CHECK(counts[1] == kControlMismatches);
    context.queue().wait_all();
    MESSAGE("ring slots at the end: ", ring.slots());
    CHECK(ring.slots() <= (max_slots ? max_slots : slots));
}

TEST_CASE_FIXTURE(VulkanFixture, "a frame ring refuses to overwrite a frame CUDA has not read, and unknown frames") {
    Interop interop;
    CudaLink& link = interop.link();
    const CudaStream stream = make_stream();
    CHECK_THROWS_AS(FrameRing(link, TextureDesc::sampled_2d(8, 8, Format::rgba8_unorm), 0), Error);
    CHECK_THROWS_WITH_AS(FrameRing(link, TextureDesc::sampled_2d(8, 8, Format::rgba8_unorm), 3, {}, 2),
                         doctest::Contains("max_slots"), Error);
    FrameRing ring(link, TextureDesc::sampled_2d(8, 8, Format::rgba8_unorm), 1, {}, 2);
    ring.begin_write(0);
    ring.end_write(0, context.queue().last_submitted());
    ring.begin_write(1);  // frame 0 not read: the ring grows to its second slot
    CHECK(ring.slots() == 2);
    CHECK_THROWS_WITH_AS(ring.begin_write(2), doctest::Contains("not read yet"), Error);
    CHECK_THROWS_WITH_AS(ring.texture(7), doctest::Contains("no frame 7"), Error);
    // On the producer's own thread a frame not ended yet can never be: refused at once.
    CHECK_THROWS_WITH_AS(ring.begin_read(1, stream.get()), doctest::Contains("no end_write yet"), Error);
    CHECK_THROWS_WITH_AS(ring.begin_read(5, stream.get()), doctest::Contains("no frame 5"), Error);
    // Batches: a count of 0, a frame past the last written, a frame not held.
    CHECK_THROWS_WITH_AS(ring.begin_read(0, 0, stream.get()), doctest::Contains("0 frames"), Error);
    CHECK_THROWS_WITH_AS(ring.end_read(0, 0, stream.get()), doctest::Contains("0 frames"), Error);
    CHECK_THROWS_WITH_AS(ring.begin_read(0, 2, stream.get()), doctest::Contains("no end_write yet"), Error);
    CHECK_THROWS_WITH_AS(ring.end_read(0, 3, stream.get()), doctest::Contains("no frame 2"), Error);
    ring.begin_read(0, stream.get());
    ring.end_read(0, stream.get());
    Texture& rewritten = ring.begin_write(2);  // frame 0's slot, after its release
    CHECK(&rewritten == &ring.texture(2).vulkan);
    CHECK(ring.slots() == 2);
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    context.queue().wait_all();
}

TEST_CASE_FIXTURE(VulkanFixture, "import and destroy 5000 times: fds, CUDA and Vulkan memory stay flat [soak]") {
    Interop interop;
    interop.link();
    { ImportedTexture warm = ImportedTexture::create(context, TextureDesc::sampled_2d(64, 64, Format::rgba8_unorm)); }
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    const auto fds = open_fds();
    const size_t cuda_free = cuda_free_memory();
    const int64_t vulkan_memory = DeviceMemory::live_count();
    for (int i = 0; i < 5000; ++i) {
        ImportedTexture t = ImportedTexture::create(
            context, TextureDesc::sampled_2d(64, 64, i % 2 ? Format::rgba8_unorm : Format::rgba16f));
        CHECK(t.cuda.valid());
    }
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(new_fds(fds, open_fds()) == "");
    CHECK(DeviceMemory::live_count() == vulkan_memory);
    const size_t after = cuda_free_memory();
    CHECK_MESSAGE(after + (4u << 20) >= cuda_free, "CUDA free memory dropped by ", (cuda_free - after) >> 20,
                  " MiB (the GPU's: was another process using it meanwhile?)");
}

TEST_CASE_FIXTURE(VulkanFixture, "CUDA writes a level through a surface, Vulkan reads it after an in-stream signal") {
    Interop interop;
    CudaLink& link = interop.link();
    const CudaStream stream = make_stream();
    ImportedTexture t = ImportedTexture::create(context, TextureDesc::sampled_2d(64, 32, Format::rgba8_unorm, 3));
    upload(context, t.vulkan, host_pixels(random_image(64, 32, Format::rgba8_unorm, 5)));
    link.cuda_wait(stream.get(), generate_mips(context, t.vulkan, MipFilter::box));
    const SurfaceObject surface = t.cuda.make_surface(1);
    write_surface_pattern({surface.get(), 32, 16, 77}, stream.get());
    TVLM_CUDA_CHECK(cudaGetLastError());
    link.vulkan_wait(link.cuda_signal(stream.get()));  // the readback's submission waits on the GPU
    const std::vector<uint8_t> level1 = readback(context, t.vulkan, 1);
    size_t bad = 0;
    for (uint32_t y = 0; y < 16; ++y)
        for (uint32_t x = 0; x < 32; ++x) {
            const uint8_t* p = &level1[(size_t{y} * 32 + x) * 4];
            bad += p[0] != x || p[1] != y || p[2] != 77 || p[3] != 255;
        }
    CHECK(bad == 0);
}

TEST_CASE_FIXTURE(VulkanFixture, "the pool reuses imports of the same shape") {
    Interop interop;
    interop.link();
    TexturePool pool(context);
    const TextureDesc desc = TextureDesc::sampled_2d(32, 32, Format::rgba8_unorm);
    ImportedTexture& a = pool.acquire(desc);
    pool.release(a);
    ImportedTexture& b = pool.acquire(desc);
    CHECK(&a == &b);
    ImportedTexture& c = pool.acquire(desc);
    CHECK(&c != &b);
    ImportedTexture& d = pool.acquire(TextureDesc::sampled_2d(32, 16, Format::rgba8_unorm));
    CHECK(&d != &c);
    CHECK(pool.size() == 3);
    CHECK(pool.in_use() == 3);
}

TEST_CASE_FIXTURE(VulkanFixture, "bad input to the import gets clear errors") {
    Interop interop;
    interop.link();
    Texture plain = Texture::create(context, TextureDesc::sampled_2d(16, 16, Format::rgba8_unorm));
    CHECK_THROWS_WITH_AS(CudaTexture::import(plain), doctest::Contains("not created exportable"), Error);
    Texture destroyed;
    CHECK_THROWS_WITH_AS(CudaTexture::import(destroyed), doctest::Contains("destroyed"), Error);
    DeviceInfo stranger = context.device_info();
    stranger.uuid = Uuid{};
    CHECK_THROWS_WITH_AS(select_cuda_device(stranger), doctest::Contains("CUDA devices:"), Error);
    TextureDesc desc = TextureDesc::sampled_2d(16, 16, Format::rgba8_unorm);
    desc.exportable = true;
    Texture exportable = Texture::create(context, desc);
    CHECK_THROWS_WITH_AS(import_dedicated_memory(exportable.export_memory_fd(), 0), doctest::Contains("size is 0"),
                         Error);
    // CUDA itself accepts a dedicated import 64x larger than the allocation (seen with
    // driver 580): the external import checks the size against the image's requirement.
    const size_t size = exportable.allocation_size();
    CHECK_THROWS_WITH_AS(CudaTexture::import_external(context, desc, exportable.export_memory_fd(), size * 64),
                         doctest::Contains("exactly"), Error);
    CHECK_THROWS_WITH_AS(CudaTexture::import_external(context, desc, exportable.export_memory_fd(), size / 2),
                         doctest::Contains("exactly"), Error);
    const CudaTexture external = CudaTexture::import_external(context, desc, exportable.export_memory_fd(), size);
    CHECK(external.valid());
    CHECK_THROWS_WITH_AS(import_dedicated_memory(UniqueFd(), 4096), doctest::Contains("not valid"), Error);
    CHECK_THROWS_WITH_AS(CudaTexture::import(exportable).make_surface(9), doctest::Contains("level 9 does not exist"),
                         Error);
    cudaGetLastError();  // the refused import leaves a non-sticky error behind
}
