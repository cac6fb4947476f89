// tvlm bench interop: what handing Vulkan textures to CUDA costs, measured on this GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "args.h"
#include "bench_gpu.h"
#include "commands.h"
#include "context.h"
#include "cuda_check.h"
#include "cuda_link.h"
#include "device_buffer.h"
#include "error.h"
#include "frame_ring.h"
#include "generate_mips.h"
#include "test_chart.h"
#include "texture_reads.h"
#include "transfer.h"
#include "cuda_timing.h"

namespace tvlm {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Row {
    std::string name;
    double value;        // per-frame ms (or us where unit says)
    std::string unit;
    double floor;        // same unit; 0 = none
    std::string note;
};

}  // namespace

int run_bench_interop(const Args& args) {
    const uint32_t frames = args.uint_option("frames").value_or(300);
    if (frames == 0) throw Error("--frames must be at least 1");
    BenchGpu gpu(args);
    Context& context = gpu.context;
    CudaLink& link = gpu.link;
    const cudaStream_t stream = gpu.stream;
    const cudaDeviceProp& prop = gpu.prop;
    std::vector<Row> rows;

    // Bandwidth ceilings measured in this run: device copy (read + write) and pinned upload.
    const double d2d = device_copy_bandwidth(stream, size_t{1} << 30);
    void* pinned = nullptr;
    const size_t upload_bytes = size_t{256} << 20;
    DeviceBuffer<uint8_t> dst(upload_bytes);
    TVLM_CUDA_CHECK(cudaMallocHost(&pinned, upload_bytes));
    const double h2d_ms = gpu_median_ms(stream, 5, [&] {
        TVLM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), pinned, upload_bytes, cudaMemcpyHostToDevice, stream));
    });
    cudaFreeHost(pinned);
    const double h2d = upload_bytes / (h2d_ms * 1e-3);
    std::fprintf(stderr, "[1/3] bandwidth: device copy %.2f TB/s, pinned upload %.1f GB/s\n", d2d * 1e-12, h2d * 1e-9);

    // Hand-over: Vulkan submission -> CUDA kernel -> back, per frame, by timeline
    // semaphores (no host waits) and by host waits on both sides.
    {
        FrameRing ring(link, TextureDesc::sampled_2d(16, 16, Format::rgba8_unorm), 2);
        DeviceBuffer<float4> out(1);
        const uint32_t n = std::max(frames, 1000u);
        auto frame = [&](uint64_t f, bool host_waits) {
            ring.begin_write(f);  // the empty submission below stands in for writing the slot
            const uint64_t ready = context.queue().submit([&](VkCommandBuffer) {});  // the Vulkan side's work
            if (host_waits) context.queue().wait(ready);
            ring.end_write(f, ready);
            const cudaTextureObject_t object = ring.begin_read(f, stream);
            sample_points({object, 1, 0.0f, static_cast<uint32_t>(f), out.data()}, stream);
            ring.end_read(f, stream);
            if (host_waits) TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
        };
        for (bool host_waits : {false, true}) {
            for (uint64_t f = 0; f < 50; ++f) frame(f, host_waits);
            TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
            const auto start = Clock::now();
            for (uint64_t f = 0; f < n; ++f) frame(f, host_waits);
            TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
            context.queue().wait_all();
            rows.push_back({host_waits ? "hand-over, host waits (vkWaitSemaphores + cudaStreamSynchronize)"
                                       : "hand-over, timeline semaphores in-stream (no host wait)",
                            ms_since(start) * 1e3 / n, "us/frame", 0.0, "empty Vulkan submit + 1-sample CUDA kernel"});
        }
        // The floor of a hand-over: an empty kernel launch + sync on this machine.
        const cudaTextureObject_t object = ring.begin_read(0, stream);
        const auto start = Clock::now();
        for (uint32_t f = 0; f < n; ++f) {
            sample_points({object, 1, 0.0f, f, out.data()}, stream);
            TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
        }
        rows.back().floor = rows[rows.size() - 2].floor = ms_since(start) * 1e3 / n;
    }
    std::fprintf(stderr, "[2/3] hand-over measured\n");

    // Steady state: upload (host memory) + blit mips + 1M trilinear samples in CUDA.
    constexpr int kSamples = 1 << 20;
    DeviceBuffer<float4> samples(kSamples);
    for (uint32_t size : {1024u, 4096u}) {
        const Rgba8Image chart = make_test_chart(size, size);
        FrameRing ring(link, TextureDesc::sampled_2d(size, size, Format::rgba8_unorm), 3);
        const float max_lod = static_cast<float>(full_mip_count(size, size) - 1);
        auto frame = [&](uint64_t f) {
            Texture& t = ring.begin_write(f);
            upload(context, t, host_pixels(chart.texels, size, size));
            ring.end_write(f, generate_mips(context, t, MipFilter::blit));
            sample_points({ring.begin_read(f, stream), kSamples, max_lod, static_cast<uint32_t>(f), samples.data()}, stream);
            ring.end_read(f, stream);
        };
        const uint32_t n = size == 4096 ? std::max(frames / 4, 20u) : frames;
        for (uint64_t f = 0; f < 5; ++f) frame(f);
        TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
        context.queue().wait_all();
        const auto start = Clock::now();
        for (uint64_t f = 0; f < n; ++f) frame(f);
        TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
        context.queue().wait_all();
        const double per_frame = ms_since(start) / n;
        const double bytes = double(size) * size * 4;
        // Floor: upload once at the pinned rate; the chain reads the base and writes a third of
        // it; the samples write 16 bytes each.
        const double floor_ms = (bytes / h2d + bytes * 4.0 / 3.0 / d2d + 16.0 * kSamples / d2d) * 1e3;
        rows.push_back({"steady state " + std::to_string(size) + "^2 RGBA8: upload + blit mips + 1M samples",
                        per_frame, "ms/frame", floor_ms,
                        std::to_string(static_cast<int>(1000.0 / per_frame)) + " frames/s; upload from pageable host memory"});
        // The CUDA part alone, GPU-timed: 1M trilinear samples at per-sample LOD.
        const cudaTextureObject_t object = ring.begin_read(0, stream);
        const double sample_ms = gpu_median_ms(stream, 50, [&] {
            sample_points({object, kSamples, max_lod, 7u, samples.data()}, stream);
        });
        rows.push_back({"1M trilinear samples (CUDA texture unit) at " + std::to_string(size) + "^2", sample_ms * 1e3,
                        "us", 16.0 * kSamples / d2d * 1e6, "writes 16 MB of float4"});
        std::fprintf(stderr, "[3/3] steady state %u^2 measured\n", size);
    }
    TVLM_CUDA_CHECK(cudaGetLastError());

    std::printf("\ntvlm bench interop on %s (CUDA %d, %s), device copy %.2f TB/s, pinned upload %.1f GB/s\n",
                prop.name, link.cuda_device(), context.device_info().driver.c_str(), d2d * 1e-12, h2d * 1e-9);
    std::printf("%-78s %12s %12s %8s  %s\n", "measurement", "value", "floor", "x floor", "note");
    for (const Row& r : rows)
        std::printf("%-78s %9.2f %-2s %9.2f %-2s %8.1f  %s\n", r.name.c_str(), r.value, r.unit.substr(0, 2).c_str(),
                    r.floor, r.unit.substr(0, 2).c_str(), r.floor > 0 ? r.value / r.floor : 0.0, r.note.c_str());
    if (const auto path = args.option("json")) {
        std::ofstream json(*path);
        if (!json) throw Error("cannot write '" + *path + "'");
        json << "{\"gpu\": \"" << prop.name << "\", \"device_copy_tb_s\": " << d2d * 1e-12
             << ", \"pinned_upload_gb_s\": " << h2d * 1e-9 << ", \"rows\": [";
        for (size_t i = 0; i < rows.size(); ++i)
            json << (i ? ", " : "") << "{\"name\": \"" << rows[i].name << "\", \"value\": " << rows[i].value
                 << ", \"unit\": \"" << rows[i].unit << "\", \"floor\": " << rows[i].floor << "}";
        json << "]}\n";
    }
    return 0;
}

}  // namespace tvlm
