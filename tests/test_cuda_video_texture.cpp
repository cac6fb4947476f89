// The CUDA video path without a decoder: NV12 -> RGBA8 against a double-precision version
// of the same rule, and CudaVideoTexture against a full copy and regeneration after every
// frame (frames made here: a moving square on a random background, then a cut).
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "cuda_pipelines/cuda_array_texture.h"
#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/cuda_check.h"
#include "tests/cuda_level_bytes.h"
#include "cuda_pipelines/cuda_video_texture.h"
#include "cuda/device_buffer.h"
#include "engine/error.h"
#include "engine/video/changed_tiles.h"
#include "tests/nv12_reference.h"
#include "tests/open_fds.h"
#include "cuda/video/video_frames.h"

namespace tvlm {
namespace {

std::vector<uint8_t> square_frame(uint32_t w, uint32_t h, uint32_t index, uint32_t cut) {
    std::mt19937 random(index >= cut ? 9 : 8);
    std::vector<uint8_t> frame(size_t{w} * h * 4);
    for (uint8_t& v : frame) v = uint8_t(random());
    const uint32_t x0 = 10 + 11 * index, y0 = 7 + 5 * index;
    for (uint32_t y = y0; y < std::min(h, y0 + 30); ++y)
        for (uint32_t x = x0; x < std::min(w, x0 + 40); ++x)
            for (uint32_t c = 0; c < 4; ++c) frame[(size_t{y} * w + x) * 4 + c] = uint8_t(200 + index + c);
    return frame;
}

TEST_CASE("a CUDA video texture equals a full copy and regeneration after every frame") {
    constexpr uint32_t kW = 301, kH = 190, kCut = 9;
    CudaVideoTexture video(kW, kH);
    CudaArrayTexture full = CudaArrayTexture::create(TextureDesc::sampled_2d(kW, kH, Format::rgba8_unorm));
    const CudaBoxMips full_mips(full.mipmaps());
    DeviceBuffer<uint8_t> frame(size_t{kW} * kH * 4);
    std::vector<uint8_t> held;
    for (uint32_t index = 0; index < 14; ++index) {
        CAPTURE(index);
        const std::vector<uint8_t> host = square_frame(kW, kH, index, kCut);
        TVLM_CUDA_CHECK(cudaMemcpy(video.frame(), host.data(), host.size(), cudaMemcpyHostToDevice));
        video.update(nullptr);
        const FrameChanges changes = video.changes();
        CHECK(changes.whole_frame == (index == 0 || index == kCut));  // the first frame, a scene cut
        if (index > 0) CHECK(changes.changed_tiles == reference_changed_tiles(held, host, video.grid(), 0));
        if (index == kCut) CHECK(changes.tiles_changed == video.grid().tile_count());  // a cut: every tile
        if (index > 0 && index != kCut) CHECK(changes.copied_fraction < 0.35);
        held = host;
        TVLM_CUDA_CHECK(cudaMemcpy(frame.data(), host.data(), host.size(), cudaMemcpyHostToDevice));
        full_mips.generate_from(frame.data(), size_t{kW} * 4, nullptr);
        TVLM_CUDA_CHECK(cudaDeviceSynchronize());
        for (uint32_t level = 0; level < full.desc().mip_levels(); ++level) {
            CAPTURE(level);
            CHECK(level_bytes(video.mipmaps(), level) == level_bytes(full.mipmaps(), level));
        }
    }
    CHECK_THROWS_AS(CudaVideoTexture(0, 10), Error);
    CHECK_THROWS_WITH_AS(CudaVideoTexture(10, 10).changes(), doctest::Contains("no frame yet"), Error);
    CHECK_THROWS_WITH_AS(CudaVideoTexture(10, 10, {.threshold = 300}), doctest::Contains("above 255"), Error);
}

TEST_CASE("NV12 frames convert to RGBA8 as the double-precision rule says, every matrix and range") {
    constexpr uint32_t kW = 67, kH = 45;  // odd: the last chroma column and row clamp
    const uint32_t cw = (kW + 1) / 2, ch = (kH + 1) / 2;
    std::mt19937 random(3);
    std::vector<uint8_t> luma(size_t{kW} * kH), chroma(size_t{cw} * ch * 2);
    for (uint8_t& v : luma) v = uint8_t(random());
    for (uint8_t& v : chroma) v = uint8_t(random());
    // Pitched as NVDEC's frames are: rows padded to 128 bytes.
    const size_t pitch = 128, out_pitch = 4 * kW + 12;
    DeviceBuffer<uint8_t> dluma(pitch * kH), dchroma(pitch * ch), out(out_pitch * kH);
    TVLM_CUDA_CHECK(cudaMemcpy2D(dluma.data(), pitch, luma.data(), kW, kW, kH, cudaMemcpyHostToDevice));
    TVLM_CUDA_CHECK(cudaMemcpy2D(dchroma.data(), pitch, chroma.data(), 2 * cw, 2 * cw, ch, cudaMemcpyHostToDevice));
    for (YuvMatrix matrix : {YuvMatrix::bt601, YuvMatrix::bt709, YuvMatrix::bt2020})
        for (bool full : {false, true}) {
            CAPTURE(int(matrix));
            CAPTURE(full);
            TVLM_CUDA_CHECK(cudaMemset(out.data(), 0x5a, out.bytes()));  // poison
            nv12_to_rgba8({dluma.data(), dchroma.data(), pitch, pitch, kW, kH, matrix, full}, out.data(), out_pitch,
                          nullptr);
            std::vector<uint8_t> got(size_t{kW} * kH * 4);
            TVLM_CUDA_CHECK(
                cudaMemcpy2D(got.data(), 4 * kW, out.data(), out_pitch, 4 * kW, kH, cudaMemcpyDeviceToHost));
            const std::vector<uint8_t> expected = nv12_reference(luma, chroma, kW, kH, matrix, full);
            int worst = 0;
            for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(int{got[i]} - int{expected[i]}));
            CHECK(worst <= 1);  // float32 against double, at rounding boundaries
        }
    CHECK_THROWS_WITH_AS(
        nv12_to_rgba8({dluma.data(), dchroma.data(), 10, pitch, kW, kH}, out.data(), out_pitch, nullptr),
        doctest::Contains("short"), Error);
}

TEST_CASE("1000 CUDA video textures fed frames leak no device memory or fds [soak]") {
    // Each: a whole first frame, then two partly changed ones (the second captures and
    // relaunches the update graph), then destroyed with its graph, events and buffers.
    const std::vector<uint8_t> first = square_frame(96, 64, 0, 99), second = square_frame(96, 64, 1, 99);
    auto cycle = [&] {
        CudaVideoTexture video(96, 64);
        for (const std::vector<uint8_t>* frame : {&first, &second, &first}) {
            TVLM_CUDA_CHECK(cudaMemcpy(video.frame(), frame->data(), frame->size(), cudaMemcpyHostToDevice));
            video.update(nullptr);
            CHECK(video.changes().copied_fraction > 0);
        }
    };
    for (int i = 0; i < 10; ++i) cycle();  // warm: the runtime's pools settle
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    const auto fds = test::open_fds();
    size_t free_before = 0, free_after = 0, total = 0;
    TVLM_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
    for (int i = 0; i < 1000; ++i) cycle();
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    TVLM_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
    INFO(free_before << " -> " << free_after << " bytes free");
    CHECK(free_after + (4u << 20) >= free_before);
    CHECK(test::new_fds(fds, test::open_fds()) == "");
}

}  // namespace
}  // namespace tvlm
