// The overlay renderer's CUDA kernels (frames in CUDA memory) against the CPU reference,
// as the Vulkan renderer is tested: random scenes with labels on RGBA8, sRGB and RGBA16F
// frames with a row pitch wider than the frame, thousands of translucent shapes over one
// tile, frames of many tiles, a frame drawn again (the binning buffers reused), draws
// launched back to back with no wait, refusals.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <random>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/cuda_handle.h"
#include "cuda_pipelines/cuda_overlay.h"
#include "cuda/device_buffer.h"
#include "engine/error.h"
#include "engine/overlay/overlay_reference.h"
#include "engine/overlay/overlay_scene.h"
#include "tests/random_overlay_scene.h"

namespace tvlm {
namespace {

int draw_both(CudaOverlay& overlay, const OverlayScene& scene, uint32_t w, uint32_t h, bool srgb, std::mt19937& random,
              size_t* changed = nullptr) {
    const std::vector<uint8_t> before = test::random_frame(w, h, random);
    const size_t pitch = size_t{w} * 4 + 64;  // rows apart by more than a row
    DeviceBuffer<uint8_t> frame(pitch * h);
    TVLM_CUDA_CHECK(
        cudaMemcpy2D(frame.data(), pitch, before.data(), size_t{w} * 4, size_t{w} * 4, h, cudaMemcpyHostToDevice));
    const std::vector<gpu::OverlayShape> shapes = overlay_shapes(scene, w, h);
    overlay.draw(shapes, frame.data(), pitch, w, h, srgb ? Format::rgba8_srgb : Format::rgba8_unorm, nullptr);
    std::vector<uint8_t> gpu(before.size());
    TVLM_CUDA_CHECK(
        cudaMemcpy2D(gpu.data(), size_t{w} * 4, frame.data(), pitch, size_t{w} * 4, h, cudaMemcpyDeviceToHost));
    const test::OverlayComparison c = test::compare_with_reference(before, gpu, shapes, w, h, srgb);
    if (changed) *changed = c.changed;
    return c.worst;
}

TEST_CASE("CUDA overlays of random scenes equal the CPU reference within one step") {
    CudaOverlay overlay;
    std::mt19937 random(21);
    for (bool srgb : {false, true})
        for (int scene = 0; scene < 3; ++scene) {
            CAPTURE(srgb);
            CAPTURE(scene);
            size_t changed = 0;
            CHECK(draw_both(overlay, test::random_scene(203, 131, random, true), 203, 131, srgb, random, &changed) <=
                  1);
            CHECK(changed > 1000);
        }
    std::uniform_real_distribution<float> at(2.0f, 14.0f);
    for (int count :
         {40, 300, 3000}) {  // listed per tile up to kOverlayTileList; past that, every shape walked in order
        CAPTURE(count);
        OverlayScene scene;
        for (int i = 0; i < count; ++i)
            scene.boxes.push_back({at(random), at(random), 6, 6, 1, 1, test::random_color(random, true),
                                   test::random_color(random, true)});
        CHECK(draw_both(overlay, scene, 40, 24, false, random) <= 1);
    }
}

// Frames of many tiles (up to 67,591), with small shapes out to the last tiles, drawn one
// after another by one overlay: each draw leaves every tile's count at zero for the next,
// whatever the next frame's size.
TEST_CASE("CUDA overlays of large frames of any size, one after another, equal the CPU reference") {
    CudaOverlay overlay;
    std::mt19937 random(44);
    for (const auto& [w, h] : {std::pair<uint32_t, uint32_t>{2304, 2048}, {4208, 4112}, {320, 200}}) {
        CAPTURE(w);
        std::uniform_real_distribution<float> jitter(-6.0f, 6.0f), size(8.0f, 40.0f);
        OverlayScene scene;
        for (int i = 0; i <= 8; ++i)
            for (int j = 0; j <= 8; ++j) {
                const float x = float(w) * float(i) / 8.0f + jitter(random),
                            y = float(h) * float(j) / 8.0f + jitter(random);
                scene.boxes.push_back({x, y, size(random), size(random), 4, 2, test::random_color(random, true),
                                       test::random_color(random, (i + j) % 2 == 0)});
                if ((i + j) % 3 == 0)
                    scene.labels.push_back({x - 10, y - 24, 14, "tile", {255, 255, 255, 255}, {20, 20, 200, 180}});
            }
        scene.points.push_back({float(w) - 2.0f, float(h) - 2.0f, 3});  // the frame's last tile
        size_t changed = 0;
        CHECK(draw_both(overlay, scene, w, h, false, random, &changed) <= 1);
        CHECK(changed > (w > 1000 ? 10000u : 1000u));
    }
}

TEST_CASE("CUDA overlays on RGBA16F frames equal the CPU reference within one 8-bit step") {
    CudaOverlay overlay;
    std::mt19937 random(33);
    constexpr uint32_t w = 203, h = 131;
    for (int scene = 0; scene < 2; ++scene) {  // twice: the second draw reuses the buffers
        CAPTURE(scene);
        const std::vector<uint16_t> before = test::random_frame_f16(w, h, random);
        const size_t pitch = size_t{w} * 8 + 24;
        DeviceBuffer<uint8_t> frame(pitch * h);
        TVLM_CUDA_CHECK(
            cudaMemcpy2D(frame.data(), pitch, before.data(), size_t{w} * 8, size_t{w} * 8, h, cudaMemcpyHostToDevice));
        const std::vector<gpu::OverlayShape> shapes = overlay_shapes(test::random_scene(w, h, random, true), w, h);
        overlay.draw(shapes, frame.data(), pitch, w, h, Format::rgba16f, nullptr);
        std::vector<uint16_t> gpu(before.size());
        TVLM_CUDA_CHECK(
            cudaMemcpy2D(gpu.data(), size_t{w} * 8, frame.data(), pitch, size_t{w} * 8, h, cudaMemcpyDeviceToHost));
        const test::OverlayComparison c = test::compare_with_reference_f16(before, gpu, shapes, w, h);
        CHECK(c.worst <= 1);
        CHECK(c.changed > 1000);
    }
}

TEST_CASE("CUDA overlays drawn back to back on one stream, no wait between, each equal the CPU reference") {
    // A draw's binning runs while the shading of the draw before it still runs (each writes
    // its own half of the buffers): eight scenes onto eight frames, launched in a row on a
    // non-blocking stream, then each frame compared.
    CudaOverlay overlay;
    std::mt19937 random(5);
    const CudaStream stream = make_stream();
    constexpr uint32_t w = 203, h = 131;
    constexpr size_t pitch = size_t{w} * 4;
    std::vector<std::vector<uint8_t>> before;
    std::vector<DeviceBuffer<uint8_t>> frames;
    std::vector<std::vector<gpu::OverlayShape>> shapes;
    for (size_t i = 0; i < 8; ++i) {
        before.push_back(test::random_frame(w, h, random));
        frames.emplace_back(pitch * h);
        TVLM_CUDA_CHECK(cudaMemcpy(frames.back().data(), before.back().data(), pitch * h, cudaMemcpyHostToDevice));
        shapes.push_back(overlay_shapes(test::random_scene(w, h, random, i % 2 == 0), w, h));
    }
    for (size_t i = 0; i < 8; ++i)
        overlay.draw(shapes[i], frames[i].data(), pitch, w, h, Format::rgba8_unorm, stream.get());
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    for (size_t i = 0; i < 8; ++i) {
        CAPTURE(i);
        std::vector<uint8_t> gpu(pitch * h);
        TVLM_CUDA_CHECK(cudaMemcpy(gpu.data(), frames[i].data(), gpu.size(), cudaMemcpyDeviceToHost));
        const test::OverlayComparison c = test::compare_with_reference(before[i], gpu, shapes[i], w, h, false);
        CHECK(c.worst <= 1);
        CHECK(c.changed > 1000);
    }
}

TEST_CASE("CUDA overlays refuse bad frames, formats and shapes, launching nothing") {
    CudaOverlay overlay;
    DeviceBuffer<uint8_t> frame(16 * 16 * 8);
    TVLM_CUDA_CHECK(cudaMemset(frame.data(), 7, frame.bytes()));
    const std::vector<gpu::OverlayShape> shapes = overlay_shapes({.points = {{8, 8, 3}}}, 16, 16);
    const auto unorm = Format::rgba8_unorm;
    CHECK_THROWS_WITH_AS(overlay.draw(shapes, nullptr, 64, 16, 16, unorm, nullptr), doctest::Contains("null"), Error);
    CHECK_THROWS_WITH_AS(overlay.draw(shapes, frame.data(), 62, 16, 16, unorm, nullptr),
                         doctest::Contains("multiple of 4"), Error);
    CHECK_THROWS_WITH_AS(overlay.draw(shapes, frame.data(), 68, 16, 16, Format::rgba16f, nullptr),
                         doctest::Contains("multiple of 8"), Error);
    CHECK_THROWS_WITH_AS(overlay.draw(shapes, frame.data(), 64, 16, 16, Format::r32f, nullptr),
                         doctest::Contains("not r32f"), Error);
    CHECK_THROWS_WITH_AS(overlay.draw(shapes, frame.data(), 32, 8, 8, unorm, nullptr),
                         doctest::Contains("outside the 8x8"), Error);
    CHECK_THROWS_WITH_AS(overlay.draw(shapes, frame.data(), size_t{4} << 21, (1u << 20) + 1, 1, unorm, nullptr),
                         doctest::Contains("pixels a side"), Error);  // checked before the frame is touched
    overlay.draw({}, frame.data(), 64, 16, 16, unorm, nullptr);       // nothing to draw: fine
    std::vector<uint8_t> after(frame.bytes());
    TVLM_CUDA_CHECK(cudaMemcpy(after.data(), frame.data(), after.size(), cudaMemcpyDeviceToHost));
    CHECK(std::all_of(after.begin(), after.end(), [](uint8_t b) { return b == 7; }));  // nothing was drawn
}

}  // namespace
}  // namespace tvlm
