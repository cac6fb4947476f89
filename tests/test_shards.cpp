// Shards of a batch over several GPUs (engine/shards.h): contiguous, differing by at most
// one image, devices past the batch empty.
#include <doctest/doctest.h>

#include <vector>

#include "engine/error.h"
#include "engine/shards.h"

namespace tvlm {
namespace {

TEST_CASE("batches shard contiguously, evenly, and over more devices than images") {
    const auto counts = [](uint32_t batch, uint32_t devices) {
        std::vector<uint32_t> c;
        uint32_t next = 0;
        for (const Shard& s : shard_batch(batch, devices)) {
            CHECK(s.first == next);  // contiguous, in order
            next += s.count;
            c.push_back(s.count);
        }
        CHECK(next == batch);
        return c;
    };
    CHECK(counts(10, 3) == std::vector<uint32_t>{4, 3, 3});
    CHECK(counts(32, 2) == std::vector<uint32_t>{16, 16});
    CHECK(counts(2, 4) == std::vector<uint32_t>{1, 1, 0, 0});
    CHECK(counts(0, 2) == std::vector<uint32_t>{0, 0});
    CHECK(counts(7, 1) == std::vector<uint32_t>{7});
    CHECK_THROWS_WITH_AS(shard_batch(4, 0), doctest::Contains("at least one device"), Error);
}

}  // namespace
}  // namespace tvlm
