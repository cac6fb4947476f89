#pragma once
// tvlm bench without an NVIDIA GPU: the rows of `suites` that need no CUDA (Vulkan compute,
// blits, OpenGL, the CPU's KNN graph), with floors at the Vulkan device's measured buffer copy rate. Fills
// `machine` (the copy rate is the Vulkan one; no upload rate).
#include <string>
#include <vector>

#include "apps/args.h"
#include "apps/bench/bench_rows.h"

namespace tvlm {

inline const std::vector<std::string> kSuitesWithoutCuda = {"mips", "sample", "overlay"};

std::vector<Row> bench_without_cuda(const Args& args, const std::vector<std::string>& suites, BenchMachine& machine);

}  // namespace tvlm
