// tvlm bench overlay: the overlay renderer on a 3840x2160 RGBA8 frame. CUDA (frame in CUDA
// memory): GPU time per draw, the shapes' copy included; Vulkan compute: wall time per
// draw (submit and wait). The KNN graph runs on the CPU (exact, brute force; its host time
// is a row of its own) and on CUDA (CudaKnnGraph: GPU time); with links, the whole frame
// is a row each way: the CPU graph, shapes and CUDA draw as wall time per frame over 20
// frames in a row, and the CUDA graph with its links drawn from the device, GPU time and wall. Floor: the frame read and written once at the device copy
// bandwidth (the definition), though a draw touches only the tiles its shapes cover.
#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "apps/bench/bench_gpu.h"
#include "apps/bench/bench_timing.h"
#include "apps/bench/overlay_scenes.h"
#include "cuda/cuda_check.h"
#include "cuda_pipelines/cuda_knn_graph.h"
#include "cuda_pipelines/cuda_overlay.h"
#include "cuda/device_buffer.h"
#include "engine/overlay/knn_graph.h"
#include "engine/overlay/overlay_renderer.h"
#include "engine/overlay/overlay_scene.h"
#include "engine/overlay/vulkan_knn.h"
#include "engine/textures/transfer.h"

namespace tvlm {

std::vector<Row> bench_overlay(BenchGpu& gpu) {
    std::vector<Row> rows;
    const double frame_bytes = double(kWidth) * kHeight * 4;
    const double floor_us = 2 * frame_bytes / gpu.machine.copy_bandwidth * 1e6;
    const size_t pitch = size_t{kWidth} * 4;
    DeviceBuffer<uint8_t> frame(pitch * kHeight);
    TVLM_CUDA_CHECK(cudaMemset(frame.data(), 40, frame.bytes()));
    CudaOverlay cuda;
    OverlayRenderer vulkan(gpu.context);
    Texture texture = Texture::create(gpu.context, TextureDesc::sampled_2d(kWidth, kHeight, Format::rgba8_unorm, 1));
    struct Job {
        std::string name;
        size_t boxes;
        bool labels;
        size_t points;
        uint32_t k;
    };
    for (const Job& j : {Job{"100 boxes with labels", 100, true, 0, 0}, Job{"1000 boxes", 1000, false, 0, 0},
                         Job{"100 points, k = 5, links as Bezier curves", 0, false, 100, 5},
                         Job{"the design's frame: 100 points, k = 5 links, 100 boxes with labels", 100, true, 100, 5},
                         Job{"5000 points, k = 5: the KNN graph alone", 0, false, 5000, 5}}) {
        std::mt19937 random(7);
        OverlayScene scene;
        add_boxes(scene, j.boxes, j.labels, random);
        const std::vector<KnnPoint> points = add_points(scene, j.points, random);
        const std::string job = "overlay 3840x2160 rgba8: " + j.name;
        if (j.k) {
            double min_us = 0;
            const double median_us = add_links(scene, points, j.k, &min_us);
            rows.push_back({job, "KNN graph, CPU (exact, " + std::to_string(scene.curves.size()) + " links)", median_us,
                            min_us, 0});
        }
        if (j.points >= 1000) {  // the graph alone, also from nearest lists computed by Vulkan compute, and on CUDA
            VulkanNearest nearest(gpu.context);
            KnnGraph graph({.k = j.k});
            const Timing t = time_frames([&](uint64_t) { graph.update(points, nearest.nearest(points, j.k + 2)); },
                                         [] {}, 3);
            rows.push_back({job, "KNN graph, nearest lists by Vulkan compute (wall: upload, dispatch, wait, links)",
                            t.median_us, t.min_us, 0});
            CudaKnnGraph on_gpu({.k = j.k});
            on_gpu.update(points, gpu.stream);
            const size_t links = on_gpu.edges().size();
            const Timing c = time_cuda(gpu.stream, [&] { on_gpu.update(points, gpu.stream); });
            rows.push_back(
                {job, "KNN graph on CUDA (nearest, links, hysteresis; " + std::to_string(links) + " links), GPU time",
                 c.median_us, c.min_us, 0});
            continue;
        }
        if (j.k) {  // the whole frame: the graph on the host, its links and the scene's shapes, the CUDA draw
            OverlayScene base = scene;
            base.curves.clear();
            std::vector<uint64_t> tracks;
            for (const KnnPoint& p : points) tracks.push_back(p.track);
            KnnGraph graph({.k = j.k});
            const Timing w = time_frames(
                [&](uint64_t) {
                    OverlayScene frame_scene = base;
                    link_points(frame_scene, tracks, graph);
                    cuda.draw(overlay_shapes(frame_scene, kWidth, kHeight), frame.data(), pitch, kWidth, kHeight,
                              Format::rgba8_unorm, gpu.stream);
                },
                [&] { TVLM_CUDA_CHECK(cudaStreamSynchronize(gpu.stream)); }, 20);
            rows.push_back({job, "KNN graph (CPU) + shapes + CUDA draw, wall per frame (20 pipelined)", w.median_us,
                            w.min_us, floor_us});
            // All on the GPU: the graph on CUDA, its links made into curves there and drawn with
            // the scene's shapes (made once: the scene is the same every frame here).
            size_t curves_end = 0;
            const std::vector<gpu::OverlayShape> base_shapes = overlay_shapes(base, kWidth, kHeight, &curves_end);
            CudaKnnGraph on_gpu({.k = j.k});
            const auto gpu_frame = [&] {
                on_gpu.update(points, gpu.stream);
                const OverlayDeviceLinks links = on_gpu.links(curves_end);
                cuda.draw(base_shapes, frame.data(), pitch, kWidth, kHeight, Format::rgba8_unorm, gpu.stream, &links);
            };
            const Timing g = time_cuda(gpu.stream, gpu_frame);
            rows.push_back(
                {job, "KNN graph on CUDA + links + CUDA draw, GPU time per frame", g.median_us, g.min_us, floor_us});
            const Timing gw = time_frames([&](uint64_t) { gpu_frame(); },
                                          [&] { TVLM_CUDA_CHECK(cudaStreamSynchronize(gpu.stream)); }, 20);
            rows.push_back({job, "KNN graph on CUDA + links + CUDA draw, wall per frame (20 pipelined)", gw.median_us,
                            gw.min_us, floor_us});
        }
        const std::vector<gpu::OverlayShape> shapes = overlay_shapes(scene, kWidth, kHeight);
        const Timing c = time_cuda(gpu.stream, [&] {
            cuda.draw(shapes, frame.data(), pitch, kWidth, kHeight, Format::rgba8_unorm, gpu.stream);
        });
        rows.push_back({job, "CUDA, frame in CUDA memory (" + std::to_string(shapes.size()) + " shapes)", c.median_us,
                        c.min_us, floor_us});
        const Timing v = time_frames([&](uint64_t) { gpu.context.queue().wait(vulkan.draw(texture, shapes)); }, [] {},
                                     5);
        rows.push_back({job, "Vulkan compute, wall time per draw (submit + wait)", v.median_us, v.min_us, floor_us});
    }
    tag_rows(rows, "overlay");
    return rows;
}

}  // namespace tvlm
