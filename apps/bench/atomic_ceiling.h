#pragma once
// The scatter's ceiling for `tvlm bench grad`: vector atomics at given addresses and nothing
// else (no point data, no weights, no texel reads), so that the backward's texel atomics
// can be printed beside what the hardware retires for the same addresses.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tvlm {

// base[index[i]] += (1, 1, 1, 1) for i < count, one thread each, stream-ordered.
void add_ones_at(float* base, const uint32_t* index, size_t count, cudaStream_t stream);

}  // namespace tvlm
