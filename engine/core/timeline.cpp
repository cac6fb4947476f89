#include "engine/core/timeline.h"

#include <cassert>

#include "engine/core/vk_check.h"

namespace tvlm {

TimelineSemaphore::TimelineSemaphore(VkDevice device, uint64_t initial_value, bool exportable)
    : device_(device), exportable_(exportable) {
    VkExportSemaphoreCreateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
    export_info.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, exportable ? &export_info : nullptr};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type.initialValue = initial_value;
    VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
    check_vk(vkCreateSemaphore(device_, &info, nullptr, semaphore_.create(device_)), "vkCreateSemaphore (timeline)");
}

uint64_t TimelineSemaphore::value() const {
    uint64_t v = 0;
    check_vk(vkGetSemaphoreCounterValue(device_, semaphore_.get(), &v), "vkGetSemaphoreCounterValue");
    return v;
}

void TimelineSemaphore::signal(uint64_t value) {
    VkSemaphoreSignalInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    info.semaphore = semaphore_.get();
    info.value = value;
    check_vk(vkSignalSemaphore(device_, &info), "vkSignalSemaphore");
}

void TimelineSemaphore::wait(uint64_t value, uint64_t timeout_ns) const {
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    info.semaphoreCount = 1;
    const VkSemaphore semaphore = semaphore_.get();
    info.pSemaphores = &semaphore;
    info.pValues = &value;
    const VkResult result = vkWaitSemaphores(device_, &info, timeout_ns);
    if (result == VK_TIMEOUT)
        throw Error("timed out waiting for timeline value " + std::to_string(value) +
                    " (the GPU work it waits on never finished)");
    check_vk(result, "vkWaitSemaphores");
}

UniqueFd TimelineSemaphore::export_fd() const {
    if (!exportable_)
        throw Error(
            "this timeline semaphore was not created exportable: the device has no "
            "VK_KHR_external_semaphore_fd (lavapipe has none; use an NVIDIA GPU)");
    return export_semaphore_fd(device_, semaphore_.get());
}

UniqueFd export_semaphore_fd(VkDevice device, VkSemaphore semaphore) {
    VkSemaphoreGetFdInfoKHR info{VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
    info.semaphore = semaphore;
    info.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    int fd = -1;
    check_vk(vkGetSemaphoreFdKHR(device, &info, &fd),
             "vkGetSemaphoreFdKHR (was the semaphore created with VkExportSemaphoreCreateInfo, OPAQUE_FD?)");
    return UniqueFd(fd);
}

}  // namespace tvlm
