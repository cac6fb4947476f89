#pragma once
// GPU timing of back-to-back launches for the benchmark suites: Vulkan and GL timestamps,
// host clocks, and CUDA events where CUDA is built; median and min over runs after warm-up.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "apps/bench/bench_rows.h"
#include "engine/core/vulkan.h"

#ifdef TVLM_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "apps/bench/cuda_timing.h"
#endif

namespace tvlm {

class Context;
class EglContext;

inline constexpr int kLaunches = 50;  // back-to-back launches per timed run: GPU time per launch
inline constexpr int kRuns = 15;

struct Timing {
    double median_us = 0, min_us = 0;
};

// Median and min per launch from the milliseconds of timed runs of `launches` launches each.
template <class T>
Timing per_launch(std::vector<T> run_ms, int launches) {
    std::sort(run_ms.begin(), run_ms.end());
    return {double(run_ms[run_ms.size() / 2]) * 1e3 / launches, double(run_ms.front()) * 1e3 / launches};
}

#ifdef TVLM_HAVE_CUDA
// GPU time per launch of `launch`, run kLaunches times per timed run.
template <class F>
Timing time_cuda(cudaStream_t stream, F launch, int launches = kLaunches) {
    return per_launch(gpu_times_ms(stream, kRuns,
                                   [&] {
                                       for (int i = 0; i < launches; ++i) launch();
                                   }),
                      launches);
}
#endif

// Wall time per frame of `frame(f)` (frames numbered on from `first`), runs of `frames`
// frames each ending with `finish()` (the host waits for everything), after `warm_up`
// frames: for work with host-side parts (copies, maps, waits) that GPU timers miss.
Timing time_frames(const std::function<void(uint64_t)>& frame, const std::function<void()>& finish, int frames,
                   int runs = kRuns, int warm_up = 3);

// Wall time of one `once()` started from idle (`idle()` waits for everything first), 200
// times after 20 warm-ups: the latency of a signal or wait, where time_frames gives the
// throughput of a stream.
Timing time_latency(const std::function<void()>& once, const std::function<void()>& idle);

// GPU time per launch of what `record` records, recorded `launches` times into one
// submission between two timestamps.
Timing time_vulkan(Context& context, const std::function<void(VkCommandBuffer)>& record, int launches = kLaunches);

// GPU time per call of the GL work `issue` issues, called `launches` times between two
// GL timestamps.
Timing time_gl(const EglContext& context, const std::function<void()>& issue, int launches = kLaunches);

}  // namespace tvlm
