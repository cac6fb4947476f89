// tvlm bench video's sharded rows: batches of frames already in CUDA memory -> box mips ->
// 273 foveated patches per image, on one GPU and sharded over --devices (MultiGpuPipeline),
// wall time per batch (the host waits for every device). Floor: each device's share of the
// bytes (frames read, level 0 and mips written, patches written) at the device copy
// bandwidth, measured on one GPU.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/bench/bench_gpu.h"
#include "apps/bench/bench_timing.h"
#include "cuda_pipelines/multi_gpu.h"
#include "engine/sampling/patch_layouts.h"

namespace tvlm {

std::vector<Row> bench_sharded(BenchGpu& gpu) {
    std::vector<Row> rows;
    if (gpu.devices.size() < 2) {
        std::printf("video: sharded rows left out (--devices lists %zu CUDA device; they need two or more)\n",
                    gpu.devices.size());
        return rows;
    }
    std::string listed;
    for (int d : gpu.devices) listed += (listed.empty() ? "" : ",") + std::to_string(d);
    struct Job {
        uint32_t size, batch;
    };
    for (const Job& j : {Job{4096, 32}, Job{1024, 64}}) {
        const std::string job = std::to_string(j.batch) + " x " + std::to_string(j.size) +
                                "^2 rgba8 in CUDA memory -> mips -> 273 patches each";
        const PatchLayout layout = foveated_layout(j.size, j.size, {}).layout;
        const double frame_bytes = double(j.size) * j.size * 4 * j.batch;
        const double out_bytes = double(PatchOutput{.channels = 3}.bytes(layout)) * j.batch;
        for (const std::vector<int>& devices : {std::vector<int>{gpu.link.cuda_device()}, gpu.devices}) {
            MultiGpuPipeline pipeline({devices, j.size, j.size, j.batch, Format::rgba8_unorm, layout, {.channels = 3}});
            // Frames are left as allocated: the bytes moved do not depend on their values.
            const Timing t = time_frames([&](uint64_t) { pipeline.run(); }, [&] { pipeline.synchronize(); }, 4, 7, 2);
            const double floor_us = (2.0 * frame_bytes + frame_bytes / 3.0 + out_bytes) / double(devices.size()) /
                                    gpu.machine.copy_bandwidth * 1e6;
            const std::string method = devices.size() == 1
                                           ? "1 GPU (" + std::to_string(devices[0]) + ")"
                                           : std::to_string(devices.size()) + " GPUs (" + listed + "), sharded";
            rows.push_back({job, method, t.median_us, t.min_us, floor_us});
        }
    }
    return rows;
}

}  // namespace tvlm
