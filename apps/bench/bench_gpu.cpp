#include "apps/bench/bench_gpu.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cuda/cuda_check.h"
#include "apps/bench/cuda_timing.h"
#include "cuda/device_buffer.h"
#include "engine/error.h"

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
        TVLM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), pinned.get(), bytes, cudaMemcpyHostToDevice, stream));
    });
    return double(bytes) / (ms * 1e-3);
}

// "all" or a comma-separated list of CUDA device indices, each checked against the devices
// this process sees, before minutes of measuring.
std::vector<int> parse_devices(const std::string& text) {
    int count = 0;
    TVLM_CUDA_CHECK(cudaGetDeviceCount(&count));
    std::vector<int> devices;
    if (text == "all") {
        for (int d = 0; d < count; ++d) devices.push_back(d);
        return devices;
    }
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, end - start);
        size_t used = 0;
        int device = -1;
        try {
            device = std::stoi(item, &used);
        } catch (const std::exception&) { used = 0; }
        if (item.empty() || used != item.size() || device < 0)
            throw Error("--devices: '" + item + "' is not a CUDA device index: give 'all' or a list such as 0,1");
        if (device >= count)
            throw Error("--devices: CUDA device " + item + " does not exist: this process sees " +
                        std::to_string(count) + " (CUDA_VISIBLE_DEVICES decides which)");
        devices.push_back(device);
        start = end + 1;
    }
    return devices;
}

}  // namespace

BenchGpu::BenchGpu(const Args& args)
    : context(bench_context(args)),
      link(context),
      owned_stream(make_stream()),
      stream(owned_stream.get()),
      devices(parse_devices(args.option_or("devices", "all"))),
      only(args.option_or("only", "")) {
    TVLM_CUDA_CHECK(cudaGetDeviceProperties(&prop, link.cuda_device()));
    machine = {prop.name, context.device_info().driver, device_copy_bandwidth(stream, size_t{1} << 30),
               upload_bandwidth(stream)};
    std::fprintf(stderr, "bandwidth: device copy %.2f TB/s, pinned upload %.1f GB/s\n", machine.copy_bandwidth * 1e-12,
                 machine.upload_bandwidth * 1e-9);
}

}  // namespace tvlm
