#pragma once
// GPU timing of CUDA work for the benchmarks (cudaEvents on one stream).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"

namespace tvlm {

// GPU times of `body` over `repeats` runs after 3 warm-up runs, in ms, sorted.
template <class F>
std::vector<float> gpu_times_ms(cudaStream_t stream, int repeats, F body) {
    cudaEvent_t a, b;
    TVLM_CUDA_CHECK(cudaEventCreate(&a));
    TVLM_CUDA_CHECK(cudaEventCreate(&b));
    std::vector<float> times;
    for (int i = 0; i < repeats + 3; ++i) {
        TVLM_CUDA_CHECK(cudaEventRecord(a, stream));
        body();
        TVLM_CUDA_CHECK(cudaEventRecord(b, stream));
        TVLM_CUDA_CHECK(cudaEventSynchronize(b));
        float t = 0;
        TVLM_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
        if (i >= 3) times.push_back(t);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(times.begin(), times.end());
    return times;
}

template <class F>
double gpu_median_ms(cudaStream_t stream, int repeats, F body) {
    const std::vector<float> times = gpu_times_ms(stream, repeats, body);
    return times[times.size() / 2];
}

// Device-to-device copy bandwidth (bytes read + written per second) over `bytes`: the
// ceiling every benchmark floor is computed from, measured in the same run.
inline double device_copy_bandwidth(cudaStream_t stream, size_t bytes = size_t{1} << 28) {
    DeviceBuffer<unsigned char> src(bytes), dst(bytes);
    TVLM_CUDA_CHECK(cudaMemsetAsync(src.data(), 1, bytes, stream));
    const double ms = gpu_median_ms(stream, 10, [&] {
        TVLM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream));
    });
    return 2.0 * double(bytes) / (ms * 1e-3);
}

}  // namespace tvlm
