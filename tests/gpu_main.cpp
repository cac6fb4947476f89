// main() of the suites that need an NVIDIA GPU: exits 77 (CTest: skipped) with the reason
// when no CUDA device can be used, so CI shows them as skipped, never as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "cuda/cuda_devices.h"

int main(int argc, char** argv) {
    const tvlm::CudaDeviceList list = tvlm::list_cuda_devices();
    if (list.devices.empty()) {
        std::printf("SKIPPED: this suite needs an NVIDIA GPU: %s\n", list.unavailable_reason.c_str());
        return 77;
    }
    doctest::Context context(argc, argv);
    return context.run();
}
