#include "bench_timing.h"

#include "context.h"
#include "gl_timer.h"
#include "gpu_timer.h"

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
