#include "engine/shards.h"

#include "engine/error.h"

namespace tvlm {

std::vector<Shard> shard_batch(uint32_t batch, uint32_t devices) {
    if (devices == 0) throw Error("a batch is sharded over at least one device");
    std::vector<Shard> shards(devices);
    uint32_t first = 0;
    for (uint32_t d = 0; d < devices; ++d) {
        const uint32_t count = batch / devices + (d < batch % devices ? 1 : 0);
        shards[d] = {first, count};
        first += count;
    }
    return shards;
}

}  // namespace tvlm
