#include "engine/core/gpu_timer.h"

#include <cstdint>

#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/core/vk_check.h"

namespace tvlm {

GpuTimer::GpuTimer(Context& context) : device_(context.device()), period_ns_(context.limits().timestampPeriod) {
    if (context.limits().timestampPeriod == 0.0f || !context.limits().timestampComputeAndGraphics)
        throw Error(context.device_info().name + " has no timestamp queries: cannot time GPU work");
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = 2;
    check_vk(vkCreateQueryPool(device_, &info, nullptr, pool_.create(device_)), "vkCreateQueryPool");
}

void GpuTimer::begin(VkCommandBuffer cmd) const {
    vkCmdResetQueryPool(cmd, pool_.get(), 0, 2);
    vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, pool_.get(), 0);
}

void GpuTimer::end(VkCommandBuffer cmd) const {
    vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, pool_.get(), 1);
}

double GpuTimer::milliseconds() const {
    uint64_t stamps[2] = {};
    check_vk(vkGetQueryPoolResults(device_, pool_.get(), 0, 2, sizeof stamps, stamps, sizeof(uint64_t),
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
             "vkGetQueryPoolResults");
    return double(stamps[1] - stamps[0]) * period_ns_ * 1e-6;
}

}  // namespace tvlm
