// MultiGpuPipeline: a batch sharded over the GPUs this process sees (over two pipelines on
// one GPU where it sees one), each shard's patches gathered equal to one GPU's, bit for bit.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <random>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "engine/error.h"
#include "cuda_pipelines/multi_gpu.h"
#include "tests/open_fds.h"
#include "engine/sampling/patch_layouts.h"

namespace tvlm {
namespace {

void finish_legacy_work(const std::vector<int>& devices) {
    int current = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&current));
    for (int d : devices) {
        TVLM_CUDA_CHECK(cudaSetDevice(d));
        TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    }
    TVLM_CUDA_CHECK(cudaSetDevice(current));
}

std::vector<uint8_t> run_on(const std::vector<int>& devices, uint32_t batch, const std::vector<uint8_t>& images) {
    const MultiGpuDesc desc{devices,
                            96,
                            80,
                            batch,
                            Format::rgba8_unorm,
                            foveated_layout(96, 80, {.budget = 20, .patch_size = 8}).layout,
                            {.channels = 4}};
    MultiGpuPipeline pipeline(desc);
    const size_t image_bytes = 96 * 80 * 4;
    for (size_t s = 0; s < pipeline.shards().size(); ++s) {
        const Shard& shard = pipeline.shards()[s];
        if (!shard.count) {
            CHECK(pipeline.frames(s) == nullptr);
            continue;
        }
        TVLM_CUDA_CHECK(cudaMemcpy(pipeline.frames(s), images.data() + shard.first * image_bytes,
                                   shard.count * image_bytes, cudaMemcpyHostToDevice));
    }
    // The pipelines' streams do not wait for the legacy stream, where cudaMemcpy from
    // pageable memory and cudaMemset may still be running when they return: each device
    // finishes them before the pipelines read the frames or gather over the poison.
    finish_legacy_work(devices);
    pipeline.run();
    DeviceBuffer<uint8_t> gathered(batch * pipeline.patch_bytes_per_image());
    TVLM_CUDA_CHECK(cudaMemset(gathered.data(), 0xff, gathered.bytes()));  // poison
    finish_legacy_work({0});
    pipeline.gather(gathered.data(), 0);
    std::vector<uint8_t> host(gathered.bytes());
    TVLM_CUDA_CHECK(cudaMemcpy(host.data(), gathered.data(), host.size(), cudaMemcpyDeviceToHost));
    return host;
}

TEST_CASE("a batch sharded over GPUs gives every image the patches one GPU gives it") {
    int count = 0;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    std::vector<int> devices;
    for (int d = 0; d < count; ++d) devices.push_back(d);
    if (devices.size() == 1) devices.push_back(0);  // two pipelines on one GPU: the sharding still runs
    MESSAGE("pipelines on CUDA devices " << devices.size() << " (" << count << " GPU(s))");
    std::mt19937 random(3);
    std::vector<uint8_t> images(5 * 96 * 80 * 4);
    for (uint8_t& v : images) v = uint8_t(random());
    const std::vector<uint8_t> one = run_on({0}, 5, images);
    CHECK(run_on(devices, 5, images) == one);
    // Fewer images than devices: the rest idle.
    const std::vector<uint8_t> first(images.begin(), images.begin() + 96 * 80 * 4);
    std::vector<int> more = devices;
    more.push_back(devices[0]);
    CHECK(run_on(more, 1, first) == run_on({0}, 1, first));
    CHECK_THROWS_WITH_AS(run_on({}, 1, first), doctest::Contains("at least one CUDA device"), Error);
    CHECK_THROWS_WITH_AS(run_on({count + 3}, 1, first), doctest::Contains("does not exist"), Error);
}

// Free memory of every device this process sees.
std::vector<size_t> free_memory(int count) {
    std::vector<size_t> free(size_t(count), 0);
    for (int d = 0; d < count; ++d) {
        size_t total = 0;
        TVLM_CUDA_CHECK(cudaSetDevice(d));
        TVLM_CUDA_CHECK(cudaMemGetInfo(&free[size_t(d)], &total));
    }
    TVLM_CUDA_CHECK(cudaSetDevice(0));
    return free;
}

TEST_CASE("multi-GPU pipelines made, run and refused a thousand times leak no memory, fds or device [soak]") {
    int count = 0;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    std::vector<int> devices;
    for (int d = 0; d < count; ++d) devices.push_back(d);
    if (devices.size() == 1) devices.push_back(0);
    const PatchLayout layout = foveated_layout(96, 80, {.budget = 20, .patch_size = 8}).layout;
    auto cycle = [&] {
        MultiGpuPipeline pipeline({devices, 96, 80, 3, Format::rgba8_unorm, layout, {.channels = 3}});
        pipeline.run();
        pipeline.synchronize();
        // A refused pipeline (a device past the end) allocates nothing.
        std::vector<int> bad = devices;
        bad.push_back(count);
        CHECK_THROWS_AS(MultiGpuPipeline({bad, 96, 80, 3, Format::rgba8_unorm, layout, {.channels = 3}}), Error);
    };
    for (int i = 0; i < 20; ++i) cycle();  // warm: the runtime's own pools settle
    const auto fds = test::open_fds();
    const std::vector<size_t> before = free_memory(count);
    int current = -1;
    for (int i = 0; i < 1000; ++i) cycle();
    TVLM_CUDA_CHECK(cudaGetDevice(&current));
    CHECK(current == 0);  // the pipelines leave the caller's device current
    const std::vector<size_t> after = free_memory(count);
    for (int d = 0; d < count; ++d) {
        INFO("device " << d << ": " << before[size_t(d)] << " -> " << after[size_t(d)] << " bytes free");
        CHECK(after[size_t(d)] + (4u << 20) >= before[size_t(d)]);
    }
    CHECK(test::new_fds(fds, test::open_fds()) == "");
}

}  // namespace
}  // namespace tvlm
