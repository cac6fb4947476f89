// The KNN graph on CUDA (CudaKnnGraph) against the CPU's KnnGraph frame after frame: points
// on a 1/8-pixel grid (float squared distances exact, so the order is the CPU's), a grid
// full of ties, the one-block and grid paths (the grid's offsets by one block's scan and by
// CUB's above 8191 points), the caps, points
// that come and go, fewer points than neighbours; a refused frame that changes nothing; and
// links drawn straight from the device equal to link_points' on the host.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda_pipelines/cuda_knn_graph.h"
#include "cuda_pipelines/cuda_overlay.h"
#include "cuda/device_buffer.h"
#include "engine/error.h"
#include "engine/overlay/knn_graph.h"
#include "engine/overlay/overlay_scene.h"
#include "tests/random_overlay_scene.h"

namespace tvlm {
namespace {

std::vector<KnnPoint> eighths_points(size_t n, int range, std::mt19937& random) {
    std::uniform_int_distribution<int> eighths(0, range * 8);
    std::vector<KnnPoint> points;
    for (uint64_t i = 0; i < n; ++i)
        points.push_back({float(eighths(random)) / 8, float(eighths(random)) / 8, 5000 + 3 * i});
    return points;
}

// Both graphs over `frames` frames of the points jittering (and shuffled: indices change,
// track ids do not); every frame's links and change count must agree.
void check_frames(KnnOptions options, std::vector<KnnPoint> points, int frames, std::mt19937& random) {
    KnnGraph cpu(options);
    CudaKnnGraph gpu(options);
    std::uniform_int_distribution<int> step(-6, 6);
    size_t links = 0, changes = 0;
    for (int f = 0; f < frames; ++f) {
        CAPTURE(f);
        gpu.update(points, nullptr);
        const std::vector<KnnEdge> expected = cpu.update(points);
        CHECK(gpu.edges() == expected);
        CHECK(gpu.edge_count() == expected.size());
        CHECK(gpu.changes() == cpu.changes());
        links += expected.size();
        if (f) changes += cpu.changes();
        for (KnnPoint& p : points) p.x += float(step(random)) / 8, p.y += float(step(random)) / 8;
        std::shuffle(points.begin(), points.end(), random);
    }
    if (points.size() >= 2) CHECK(links > 0);
    if (frames > 1 && points.size() > 20) CHECK(changes > 0);  // the hysteresis had links to decide
}

TEST_CASE("the CUDA KNN graph equals the CPU's frame after frame, ties by index") {
    std::mt19937 random(31);
    check_frames({.k = 5, .hysteresis = 2}, eighths_points(300, 100, random), 5, random);
    check_frames({.k = 4, .hysteresis = 0}, eighths_points(300, 100, random), 3, random);
    check_frames({.k = 9, .hysteresis = 7}, eighths_points(200, 60, random), 3, random);    // 16 kept: the grid path
    check_frames({.k = 5, .hysteresis = 2}, eighths_points(2500, 400, random), 2, random);  // over 1024: the grid path
    check_frames({.k = 3, .hysteresis = 1}, eighths_points(9000, 800, random), 2, random);  // offsets by CUB's scan
    std::vector<KnnPoint> grid;  // every distance repeated: ties everywhere
    for (uint32_t y = 0; y < 15; ++y)
        for (uint32_t x = 0; x < 20; ++x) grid.push_back({float(x) * 4, float(y) * 4, y * 20 + x});
    check_frames({.k = 5, .hysteresis = 2}, grid, 1, random);
    check_frames({.k = 5, .hysteresis = 2, .max_dy = 10}, eighths_points(300, 100, random), 3, random);
    check_frames({.k = 6, .hysteresis = 2, .max_degree = 4}, eighths_points(300, 100, random), 3, random);
    check_frames({.k = 6, .hysteresis = 1, .max_dy = 20, .max_degree = 3}, eighths_points(1500, 300, random), 2,
                 random);
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{3}})
        check_frames({.k = 5, .hysteresis = 2}, eighths_points(n, 100, random), 2, random);
}

TEST_CASE("the CUDA KNN graph follows points that come and go, growing its buffers") {
    std::mt19937 random(32);
    const std::vector<KnnPoint> all = eighths_points(900, 200, random);
    KnnGraph cpu({.k = 5, .hysteresis = 2});
    CudaKnnGraph gpu({.k = 5, .hysteresis = 2});
    for (ptrdiff_t n : {50, 300, 40, 900, 899, 0, 120}) {
        CAPTURE(n);
        std::vector<KnnPoint> points(all.begin(), all.begin() + n);
        std::shuffle(points.begin(), points.end(), random);
        gpu.update(points, nullptr);
        CHECK(gpu.edges() == cpu.update(points));
        CHECK(gpu.changes() == cpu.changes());
    }
}

TEST_CASE("the CUDA KNN graph refuses bad options and points; a refused frame changes nothing") {
    CHECK_THROWS_WITH_AS(CudaKnnGraph({.k = 0}), doctest::Contains("k >= 1"), Error);
    CHECK_THROWS_WITH_AS(CudaKnnGraph({.k = 10, .hysteresis = 7}), doctest::Contains("at most 16"), Error);
    CHECK_THROWS_WITH_AS(CudaKnnGraph({.k = 2, .max_dy = std::numeric_limits<float>::quiet_NaN()}),
                         doctest::Contains("max_dy"), Error);
    std::mt19937 random(33);
    const std::vector<KnnPoint> good = eighths_points(60, 50, random);
    KnnGraph cpu({.k = 3, .hysteresis = 2});
    CudaKnnGraph gpu({.k = 3, .hysteresis = 2});
    gpu.update(good, nullptr);
    CHECK(gpu.edges() == cpu.update(good));
    std::vector<KnnPoint> bad = good;
    bad[7].y = std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH_AS(gpu.update(bad, nullptr), doctest::Contains("point 7 has a NaN or infinite"), Error);
    std::vector<KnnPoint> twice = good;
    twice[40].track = twice[12].track;  // found on the device: reported by the next read
    gpu.update(twice, nullptr);
    CHECK_THROWS_WITH_AS(gpu.edges(), doctest::Contains("point 40 repeats track id"), Error);
    CHECK_THROWS_WITH_AS(gpu.changes(), doctest::Contains("point 40 repeats track id"), Error);
    CHECK_THROWS_AS(cpu.update(twice), Error);
    std::vector<KnnPoint> moved = good;
    for (KnnPoint& p : moved) p.x += 0.25f;
    gpu.update(moved, nullptr);
    CHECK(gpu.edges() == cpu.update(moved));  // the graph went on from the last good frame, as the CPU's
    CHECK(gpu.changes() == cpu.changes());
}

TEST_CASE("links drawn from the device equal link_points' links drawn from the host") {
    std::mt19937 random(34);
    const uint32_t w = 211, h = 137;
    CudaKnnGraph gpu({.k = 5, .hysteresis = 2});
    KnnGraph cpu({.k = 5, .hysteresis = 2});
    CudaOverlay overlay;
    OverlayScene scene = test::random_scene(w, h, random, true);
    std::vector<KnnPoint> points;
    std::vector<uint64_t> tracks;
    for (size_t i = 0; i < scene.points.size(); ++i) {
        points.push_back({scene.points[i].x, scene.points[i].y, 100 + i});
        tracks.push_back(100 + i);
    }
    const size_t pitch = size_t{w} * 4;
    DeviceBuffer<uint8_t> frame(pitch * h);
    for (int f = 0; f < 3; ++f) {
        CAPTURE(f);
        const std::vector<uint8_t> before = test::random_frame(w, h, random);
        TVLM_CUDA_CHECK(cudaMemcpy(frame.data(), before.data(), before.size(), cudaMemcpyHostToDevice));
        size_t curves_end = 0;
        const std::vector<gpu::OverlayShape> shapes = overlay_shapes(scene, w, h, &curves_end);
        gpu.update(points, nullptr);
        const OverlayDeviceLinks links = gpu.links(curves_end, 3, {40, 220, 255, 200});
        overlay.draw(shapes, frame.data(), pitch, w, h, Format::rgba8_unorm, nullptr, &links);
        std::vector<uint8_t> drawn(before.size());
        TVLM_CUDA_CHECK(cudaMemcpy(drawn.data(), frame.data(), drawn.size(), cudaMemcpyDeviceToHost));
        OverlayScene linked = scene;
        CHECK(link_points(linked, tracks, cpu, 3, {40, 220, 255, 200}) == gpu.edges().size());
        const test::OverlayComparison c = test::compare_with_reference(before, drawn, overlay_shapes(linked, w, h), w,
                                                                       h, false);
        CHECK(c.worst <= 1);
        CHECK(c.changed > 1000);
        for (size_t i = 0; i < points.size(); ++i) {  // the points move; the scene's with them
            points[i].x += float(random() % 9) - 4.0f;
            scene.points[i].x = points[i].x;
        }
    }
    // Bad placements: past the shapes, a NaN bound.
    OverlayDeviceLinks links = gpu.links(1u << 20);
    CHECK_THROWS_WITH_AS(overlay.draw({}, frame.data(), pitch, w, h, Format::rgba8_unorm, nullptr, &links),
                         doctest::Contains("device links placed at shape"), Error);
}

}  // namespace
}  // namespace tvlm
