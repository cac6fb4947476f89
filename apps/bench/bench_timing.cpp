#include "apps/bench/bench_timing.h"

#include <chrono>

#include "engine/core/context.h"
#include "interop/gl/gl_timer.h"
#include "engine/core/gpu_timer.h"

namespace tvlm {

Timing time_vulkan(Context& context, const std::function<void(VkCommandBuffer)>& record, int launches) {
    GpuTimer timer(context);
    std::vector<double> t;
    for (int run = 0; run < kRuns + 2; ++run) {
        context.queue().wait(context.queue().submit([&](VkCommandBuffer cmd) {
            timer.begin(cmd);
            for (int i = 0; i < launches; ++i) record(cmd);
            timer.end(cmd);
        }));
        if (run >= 2) t.push_back(timer.milliseconds());
    }
    return per_launch(t, launches);
}

Timing time_frames(const std::function<void(uint64_t)>& frame, const std::function<void()>& finish, int frames,
                   int runs, int warm_up) {
    using Clock = std::chrono::steady_clock;
    uint64_t f = 0;
    for (; f < uint64_t(warm_up); ++f) frame(f);
    finish();
    std::vector<double> t;
    for (int run = 0; run < runs; ++run) {
        const auto start = Clock::now();
        for (int i = 0; i < frames; ++i) frame(f++);
        finish();
        t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    return per_launch(t, frames);
}

Timing time_latency(const std::function<void()>& once, const std::function<void()>& idle) {
    using Clock = std::chrono::steady_clock;
    std::vector<double> t;
    for (int i = 0; i < 220; ++i) {
        idle();
        const auto start = Clock::now();
        once();
        if (i >= 20) t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    std::sort(t.begin(), t.end());
    return {t[t.size() / 2], t.front()};
}

Timing time_gl(const EglContext& context, const std::function<void()>& issue, int launches) {
    const GlTimer timer(context);
    std::vector<double> t;
    for (int run = 0; run < kRuns + 2; ++run) {
        timer.begin();
        for (int i = 0; i < launches; ++i) issue();
        timer.end();
        if (run >= 2) t.push_back(timer.milliseconds());
    }
    return per_launch(t, launches);
}

}  // namespace tvlm
