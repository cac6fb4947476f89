#pragma once
// What every benchmark suite runs on: the Vulkan context (--device), its CUDA link, one
// non-blocking stream (owned here), the matched CUDA device's properties and the copy
// bandwidths every floor is computed from, measured once at the start of the run.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "apps/args.h"
#include "apps/bench/bench_rows.h"
#include "engine/core/context.h"
#include "cuda/cuda_handle.h"
#include "interop/cuda_link.h"

namespace tvlm {

class BenchGpu {
public:
    explicit BenchGpu(const Args& args);
    BenchGpu(const BenchGpu&) = delete;
    BenchGpu& operator=(const BenchGpu&) = delete;

    Context context;
    CudaLink link;
    CudaStream owned_stream;
    cudaStream_t stream = nullptr;  // owned_stream's handle
    cudaDeviceProp prop{};
    BenchMachine machine;  // GPU, driver, device copy and pinned upload bandwidth
    // --devices all|I,J,...: the CUDA devices a batch is sharded over in the video suite's
    // sharded rows (default all this process sees; a device may repeat).
    std::vector<int> devices;
    // --only TEXT: the mips and video suites run only the jobs whose name contains TEXT
    // (one chain under a profiler, one frame size); empty: every job.
    std::string only;
};

// The suites (apps/bench/bench_*.cpp): rows of GPU or wall times, each with its floor.
std::vector<Row> bench_mips(BenchGpu& gpu);
std::vector<Row> bench_handover(BenchGpu& gpu);
std::vector<Row> bench_sample(BenchGpu& gpu);
std::vector<Row> bench_video(BenchGpu& gpu);
std::vector<Row> bench_grad(BenchGpu& gpu);
std::vector<Row> bench_fields(BenchGpu& gpu);
std::vector<Row> bench_overlay(BenchGpu& gpu);
std::vector<Row> bench_sharded(BenchGpu& gpu);     // part of video: batches over gpu.devices
std::vector<Row> bench_video_file(BenchGpu& gpu);  // where FFmpeg was found

}  // namespace tvlm
