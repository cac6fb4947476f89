// A planted bug for tests/run_gpu_suites.sh to prove its sanitizer runs catch one: device
// memory copied to the host before anything wrote it (initcheck reports the copy's source).
// Skipped unless asked for by name with --no-skip, so no ordinary run executes it.
#include <doctest/doctest.h>

#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"

namespace tvlm {
namespace {

TEST_CASE("sanitizer canary: an uninitialised read the sanitizers must report" * doctest::skip()) {
    DeviceBuffer<float> never_written(1024);
    std::vector<float> host(never_written.size());
    TVLM_CUDA_CHECK(cudaMemcpy(host.data(), never_written.data(), never_written.bytes(), cudaMemcpyDeviceToHost));
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(host.size() == 1024);
}

}  // namespace
}  // namespace tvlm
