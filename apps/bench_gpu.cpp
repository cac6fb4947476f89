#include "bench_gpu.h"

#include <cstdio>

#include "cuda_check.h"
#include "cuda_timing.h"
#include "device_buffer.h"

namespace tvlm {

namespace {

ContextDesc bench_context(const Args& args) {
    ContextDesc desc;
    desc.device = DeviceSelector::parse(args.option_or("device", ""));
    return desc;
}

// Pinned host -> device copy bandwidth over 256 MiB: the ceiling of every upload.
double upload_bandwidth(cudaStream_t stream) {
    const size_t bytes = size_t{256} << 20;
    DeviceBuffer<unsigned char> dst(bytes);
    const PinnedMemory pinned = allocate_pinned(bytes);
    const double ms = gpu_median_ms(stream, 5, [&] {
        TVLM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), pinned.handle(), bytes, cudaMemcpyHostToDevice, stream));
    });
    return double(bytes) / (ms * 1e-3);
}

}  // namespace

BenchGpu::BenchGpu(const Args& args)
    : context(bench_context(args)), link(context), owned_stream(make_stream()), stream(owned_stream.handle()) {
    TVLM_CUDA_CHECK(cudaGetDeviceProperties(&prop, link.cuda_device()));
    machine = {prop.name, context.device_info().driver, device_copy_bandwidth(stream, size_t{1} << 30),
               upload_bandwidth(stream)};
    std::fprintf(stderr, "bandwidth: device copy %.2f TB/s, pinned upload %.1f GB/s\n", machine.copy_bandwidth * 1e-12,
                 machine.upload_bandwidth * 1e-9);
}

}  // namespace tvlm
