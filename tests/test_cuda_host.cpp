// The hand-off from an application's frame to CUDA (interop/host_semaphore.h): a stream
// waits on the GPU for a semaphore the application signals, timeline or binary, and runs
// only after the signal; CUDA maps the application's exportable image zero-copy, builds its
// mips there and signals the application back. The application is tests/host_renderer.h's
// raw-Vulkan renderer.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "engine/core/context.h"
#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/cuda_check.h"
#include "interop/cuda_device.h"
#include "interop/textures/cuda_texture.h"
#include "cuda/cuda_handle.h"
#include "cuda/device_buffer.h"
#include "engine/error.h"
#include "tests/host_renderer.h"
#include "interop/host_semaphore.h"
#include "tests/texture_compare.h"
#include "engine/textures/transfer.h"

using namespace tvlm;
using namespace tvlm::test;

namespace {

// The application's exportable semaphore (timeline: initial value 0).
VkSemaphore exportable_semaphore(VkDevice device, bool timeline) {
    VkExportSemaphoreCreateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
    export_info.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, &export_info};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                               timeline ? static_cast<void*>(&type) : static_cast<void*>(&export_info)};
    VkSemaphore semaphore = VK_NULL_HANDLE;
    check_vk(vkCreateSemaphore(device, &info, nullptr, &semaphore), "vkCreateSemaphore");
    return semaphore;
}

// A stream whose memset waits on `semaphore`: not done before the application signals,
// done after. `signal` is what the application does.
template <class Signal>
void check_waits(const HostSemaphore& semaphore, Signal signal) {
    CudaStream stream = [] {
        cudaStream_t s = nullptr;
        TVLM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        return CudaStream(s);
    }();
    DeviceBuffer<uint32_t> value(1);
    TVLM_CUDA_CHECK(cudaMemset(value.data(), 0, 4));
    semaphore.wait(stream.get(), 1);
    TVLM_CUDA_CHECK(cudaMemsetAsync(value.data(), 7, 4, stream.get()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(cudaStreamQuery(stream.get()) == cudaErrorNotReady);  // waiting on the GPU for the application
    signal();
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    uint32_t got = 0;
    TVLM_CUDA_CHECK(cudaMemcpy(&got, value.data(), 4, cudaMemcpyDeviceToHost));
    CHECK(got == 0x07070707u);
}

}  // namespace

TEST_CASE("CUDA waits in-stream for a semaphore the application signals: timeline and binary") {
    HostRenderer host(true, {VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME});
    Context context(host.objects());
    REQUIRE(context.semaphore_export());

    const VkSemaphore timeline = exportable_semaphore(host.device(), true);
    const HostSemaphore from_timeline = HostSemaphore::import(context, timeline, HostSemaphore::Kind::timeline);
    check_waits(from_timeline, [&] {  // the host signals value 1
        VkSemaphoreSignalInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
        info.semaphore = timeline;
        info.value = 1;
        check_vk(vkSignalSemaphore(host.device(), &info), "vkSignalSemaphore");
    });

    const VkSemaphore binary = exportable_semaphore(host.device(), false);
    const HostSemaphore from_binary = HostSemaphore::import(context, binary, HostSemaphore::Kind::binary);
    check_waits(from_binary, [&] { host.submit_signal(binary); });  // the frame's submission signals it

    vkDeviceWaitIdle(host.device());
    vkDestroySemaphore(host.device(), timeline, nullptr);
    vkDestroySemaphore(host.device(), binary, nullptr);
    for (const std::string& m : host.log().messages()) FAIL_CHECK(m);
    CHECK(host.log().messages().empty());
}

TEST_CASE("A device without semaphore export is refused, and a null semaphore") {
    HostRenderer host(true);  // no VK_KHR_external_semaphore_fd
    Context context(host.objects());
    CHECK_FALSE(context.semaphore_export());
    CHECK_THROWS_WITH_AS(
        HostSemaphore::import(context, reinterpret_cast<VkSemaphore>(uintptr_t{1}), HostSemaphore::Kind::timeline),
        doctest::Contains("VK_KHR_external_semaphore_fd"), Error);
    CHECK_THROWS_AS(HostSemaphore::import(context, VK_NULL_HANDLE, HostSemaphore::Kind::binary), Error);
}

TEST_CASE("CUDA maps the application's exportable image zero-copy, builds its mips there, signals the application") {
    HostRenderer host(true, {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME});
    Context context(host.objects());
    REQUIRE(context.memory_export());
    REQUIRE(context.semaphore_export());
    select_cuda_device(context.device_info());
    // Rendered to as well: CUDA is told (cudaArrayColorAttachment) how the image is used.
    OwnImage image(host, 64, 40,
                   VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                       VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
                   true);
    Texture texture = Texture::wrap(context, image.described());
    ImageF base(64, 40, 4);
    for (size_t i = 0; i < base.texels.size(); ++i) base.texels[i] = float((i * 7919) % 1000) / 1000.0f;
    upload(context, texture, host_pixels(base));
    context.queue().wait_all();

    const CudaTexture cuda = CudaTexture::import(texture);
    CudaStream stream = [] {
        cudaStream_t s = nullptr;
        TVLM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        return CudaStream(s);
    }();
    CudaBoxMips(cuda).generate(stream.get());
    const VkSemaphore timeline = exportable_semaphore(host.device(), true);
    const HostSemaphore done = HostSemaphore::import(context, timeline, HostSemaphore::Kind::timeline);
    done.signal(stream.get(), 3);  // CUDA tells the application it is done with the image
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    const uint64_t value = 3;
    wait.semaphoreCount = 1;
    wait.pSemaphores = &timeline;
    wait.pValues = &value;
    CHECK(vkWaitSemaphores(host.device(), &wait, 10'000'000'000ull) == VK_SUCCESS);

    // The mips CUDA wrote are in the application's image, as Vulkan reads it.
    check_rgba32f_box_chain([&](uint32_t l) { return readback_image(context, texture, l); }, base, texture.levels());
    vkDeviceWaitIdle(host.device());
    vkDestroySemaphore(host.device(), timeline, nullptr);
    for (const std::string& m : host.log().messages()) FAIL_CHECK(m);
    CHECK(host.log().messages().empty());
}
