// CUDA devices and their Vulkan twins (NVIDIA machine only).
#include <doctest/doctest.h>

#include <algorithm>

#include "cuda/cuda_devices.h"
#include "interop/cuda_match.h"
#include "interop/rank_device.h"

#include <cuda_runtime_api.h>
#include "tests/vulkan_fixture.h"

using namespace tvlm;

TEST_CASE("CUDA devices have names, compute capability and non-zero UUIDs") {
    const CudaDeviceList list = list_cuda_devices();
    REQUIRE_FALSE(list.devices.empty());
    for (const CudaDeviceInfo& d : list.devices) {
        CHECK_FALSE(d.name.empty());
        CHECK(d.compute_major >= 5);
        CHECK(std::any_of(d.uuid.begin(), d.uuid.end(), [](uint8_t b) { return b != 0; }));
    }
}

TEST_CASE("the Vulkan device chosen by CUDA UUID is the same GPU") {
    const CudaDeviceList list = list_cuda_devices();
    REQUIRE_FALSE(list.devices.empty());
    Uuid uuid;
    uuid.bytes = list.devices[0].uuid;
    ContextDesc desc;
    desc.device.uuid = uuid;
    desc.validation = true;
    Context context(desc);
    CHECK(context.device_info().uuid == uuid);
    const CudaMatch match = match_cuda_device(context.device_info());
    REQUIRE(match.ordinal.has_value());
    CHECK(*match.ordinal == 0);
    CHECK(context.memory_export());
    CHECK(context.semaphore_export());
    CHECK(context.validation_log().count() == 0);
}

TEST_CASE("each CUDA device, made current as a rank would, opens its own Vulkan twin") {
    const CudaDeviceList list = list_cuda_devices();
    REQUIRE_FALSE(list.devices.empty());
    int previous = 0;
    REQUIRE(cudaGetDevice(&previous) == cudaSuccess);
    for (const CudaDeviceInfo& d : list.devices) {
        CAPTURE(d.ordinal);
        REQUIRE(cudaSetDevice(d.ordinal) == cudaSuccess);
        CHECK(selector_for_current_cuda_device().uuid->bytes == d.uuid);
        Context context = open_rank_context(true);
        CHECK(context.device_info().uuid.bytes == d.uuid);
        CHECK(context.validation_log().count() == 0);
    }
    REQUIRE(cudaSetDevice(previous) == cudaSuccess);
}
