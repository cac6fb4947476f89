#pragma once
// A batch split over several GPUs (issue 21): contiguous shards, as data-parallel training
// splits a global batch. Pure arithmetic, used by whoever drives one engine per GPU.
#include <cstdint>
#include <vector>

namespace tvlm {

struct Shard {
    uint32_t first = 0, count = 0;  // images [first, first + count) of the batch
};

// One shard per device, in order: every device gets batch / devices images and the first
// batch % devices one more, so shards differ by at most one; with fewer images than
// devices the last devices get none (count 0). Throws Error for 0 devices.
std::vector<Shard> shard_batch(uint32_t batch, uint32_t devices);

}  // namespace tvlm
