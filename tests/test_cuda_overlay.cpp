// The overlay renderer's CUDA kernels (frames in CUDA memory) against the CPU reference,
// as the Vulkan renderer is tested: random scenes on RGBA8 and sRGB frames with a row
// pitch wider than the frame, thousands of translucent shapes over one tile, refusals.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <random>
#include <vector>

#include "cuda_check.h"
#include "cuda_overlay.h"
#include "device_buffer.h"
#include "error.h"
#include "overlay/overlay_reference.h"
#include "overlay/overlay_scene.h"
#include "random_overlay_scene.h"

namespace tvlm {
namespace {

int draw_both(CudaOverlay& overlay, const OverlayScene& scene, uint32_t w, uint32_t h, bool srgb, std::mt19937& random,
              size_t* changed = nullptr) {
    const std::vector<uint8_t> before = test::random_frame(w, h, random);
    const size_t pitch = size_t{w} * 4 + 64;  // rows apart by more than a row
    DeviceBuffer<uint8_t> frame(pitch * h);
    TVLM_CUDA_CHECK(cudaMemcpy2D(frame.data(), pitch, before.data(), size_t{w} * 4, size_t{w} * 4, h, cudaMemcpyHostToDevice));
    const std::vector<gpu::OverlayShape> shapes = overlay_shapes(scene, w, h);
    overlay.draw(shapes, frame.data(), pitch, w, h, srgb, nullptr);
    std::vector<uint8_t> gpu(before.size());
    TVLM_CUDA_CHECK(cudaMemcpy2D(gpu.data(), size_t{w} * 4, frame.data(), pitch, size_t{w} * 4, h, cudaMemcpyDeviceToHost));
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
            CHECK(draw_both(overlay, test::random_scene(203, 131, random), 203, 131, srgb, random, &changed) <= 1);
            CHECK(changed > 1000);
        }
    std::uniform_real_distribution<float> at(2.0f, 14.0f);
    for (int count : {300, 3000}) {  // sorted per tile; past TVLM_OVERLAY_SORTED, walked in order
        CAPTURE(count);
        OverlayScene scene;
        for (int i = 0; i < count; ++i)
            scene.boxes.push_back({at(random), at(random), 6, 6, 1, 1, test::random_color(random, true),
                                   test::random_color(random, true)});
        CHECK(draw_both(overlay, scene, 40, 24, false, random) <= 1);
    }
}

TEST_CASE("CUDA overlays refuse bad frames and shapes, launching nothing") {
    CudaOverlay overlay;
    DeviceBuffer<uint8_t> frame(16 * 16 * 4);
    const std::vector<gpu::OverlayShape> shapes = overlay_shapes({.points = {{8, 8, 3}}}, 16, 16);
    CHECK_THROWS_WITH_AS(overlay.draw(shapes, nullptr, 64, 16, 16, false, nullptr), doctest::Contains("null"), Error);
    CHECK_THROWS_WITH_AS(overlay.draw(shapes, frame.data(), 62, 16, 16, false, nullptr), doctest::Contains("multiple of 4"), Error);
    CHECK_THROWS_WITH_AS(overlay.draw(shapes, frame.data(), 32, 8, 8, false, nullptr), doctest::Contains("outside the 8x8"), Error);
    const std::vector<gpu::OverlayShape> label = overlay_shapes({.labels = {{1, 1, 10, "A"}}}, 16, 16);
    CHECK_THROWS_WITH_AS(overlay.draw(label, frame.data(), 64, 16, 16, false, nullptr), doctest::Contains("not yet by CUDA"),
                         Error);
    overlay.draw({}, frame.data(), 64, 16, 16, false, nullptr);  // nothing to draw: fine
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
}  // namespace tvlm
