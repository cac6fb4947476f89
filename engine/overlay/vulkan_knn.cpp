#include "engine/overlay/vulkan_knn.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "engine/core/barriers.h"
#include "engine/core/compute_pipeline.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "shaders/shader_params.h"
#include "shaders/spirv.h"

namespace tvlm {

VulkanNearest::VulkanNearest(Context& context) : context_(context) {}

std::vector<std::vector<uint32_t>> VulkanNearest::nearest(std::span<const KnnPoint> points, uint32_t count) {
    if (count == 0 || count > TVLM_KNN_MAX)
        throw Error("the GPU keeps 1 to " + std::to_string(TVLM_KNN_MAX) +
                    " neighbours per point (k + hysteresis), not " + std::to_string(count));
    for (size_t i = 0; i < points.size(); ++i)
        if (!std::isfinite(points[i].x) || !std::isfinite(points[i].y))
            throw Error("KNN point " + std::to_string(i) + " has a NaN or infinite coordinate");
    const size_t n = points.size();
    const uint32_t keep = uint32_t(std::min<size_t>(count, n ? n - 1 : 0));
    std::vector<std::vector<uint32_t>> lists(n);
    if (keep == 0) return lists;
    if (points_.size() < n * 8)
        points_ = HostBuffer(context_.physical_device(), context_.device(), n * 8, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    if (nearest_.size() < n * keep * 4)
        nearest_ = HostBuffer(context_.physical_device(), context_.device(), n * keep * 4,
                              VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    auto* xy = reinterpret_cast<float*>(points_.data());
    for (size_t i = 0; i < n; ++i) xy[2 * i] = points[i].x, xy[2 * i + 1] = points[i].y;
    const ComputePipeline& pipeline = context_.pipeline(
        "knn_nearest", {.spirv = shaders::knn_nearest(),
                        .bindings = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER},
                        .push_constant_bytes = sizeof(gpu::KnnParams)});
    const gpu::KnnParams params{uint32_t(n), keep, 0, 0};
    const uint64_t done = context_.queue().submit([&](VkCommandBuffer cmd) {
        const VkDescriptorBufferInfo in{points_.handle(), 0, VK_WHOLE_SIZE}, out{nearest_.handle(), 0, VK_WHOLE_SIZE};
        const std::array<VkWriteDescriptorSet, 2> writes{storage_buffer_write(0, &in), storage_buffer_write(1, &out)};
        record_compute_output_before(cmd);
        pipeline.bind(cmd, writes, &params);
        vkCmdDispatch(cmd, uint32_t((n + TVLM_KNN_THREADS - 1) / TVLM_KNN_THREADS), 1, 1);
        record_compute_output_after(cmd);  // the lists, to the host
    });
    context_.queue().wait(done);
    const auto* out = reinterpret_cast<const uint32_t*>(nearest_.data());
    for (size_t i = 0; i < n; ++i) lists[i].assign(out + i * keep, out + (i + 1) * keep);
    return lists;
}

}  // namespace tvlm
