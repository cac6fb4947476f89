// Launches replayed as graphs (cuda_pipelines/replayed_launches.h): a key's second call is
// captured and its later calls replay the graph, writing what a direct launch writes; keys
// that come back only once each (captured, never replayed) pause the captures, graphs kept
// still replay during the pause, and captures resume after it; graphs evicted after
// replaying do not count against the captures.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/cuda_handle.h"
#include "cuda/device_buffer.h"
#include "cuda/stream_capture.h"
#include "cuda_pipelines/replayed_launches.h"
#include "tests/device_read_back.h"

using namespace tvlm;

namespace {

// Calls into one ReplayedLaunches, each writing its key's byte into a buffer, counting how
// they ran: launched directly, recorded into a capture, or neither (a replay).
struct Calls {
    ReplayedLaunches replayed;
    CudaStream stream = make_stream();
    DeviceBuffer<unsigned char> buffer{4096};
    int direct = 0, captured = 0;

    // Runs key `k` (its byte: k % 251 + 1) and returns how the call ran.
    const char* run(uint64_t k) {
        const int direct_before = direct, captured_before = captured;
        const auto value = static_cast<unsigned char>(k % 251 + 1);
        replayed.run({7, k}, stream.get(), [&](cudaStream_t s) {
            ++(stream_capturing(s) ? captured : direct);
            TVLM_CUDA_CHECK(cudaMemsetAsync(buffer.data(), value, buffer.size(), s));
        });
        // Whatever ran, the buffer holds the key's byte afterwards.
        for (unsigned char b : read_back(buffer, stream.get())) REQUIRE(b == value);
        if (direct > direct_before) return "direct";
        return captured > captured_before ? "captured" : "replayed";
    }
};

}  // namespace

TEST_CASE("a repeated key runs directly, then is captured, then replays its graph") {
    Calls calls;
    CHECK(std::string(calls.run(1)) == "direct");
    CHECK(std::string(calls.run(1)) == "captured");
    CHECK(std::string(calls.run(1)) == "replayed");
    CHECK(std::string(calls.run(2)) == "direct");
    CHECK(std::string(calls.run(1)) == "replayed");
    CHECK(calls.replayed.graphs() == 1);
}

TEST_CASE("keys that come back once each pause the captures; kept graphs replay meanwhile; captures resume") {
    Calls calls;
    using R = ReplayedLaunches;
    // Each key twice, never again: every second call is captured until the kept set is
    // full and kWastedLimit graphs left it unreplayed.
    const uint64_t churned = R::kGraphs + R::kWastedLimit;
    uint64_t key = 100;
    for (uint64_t i = 0; i < churned; ++i, ++key) {
        CHECK(std::string(calls.run(key)) == "direct");
        CHECK(std::string(calls.run(key)) == "captured");
    }
    CHECK(calls.captured == int(churned));
    CHECK(calls.replayed.graphs() == R::kGraphs);
    // Paused: a new key's second call launches directly, for the pause's calls...
    size_t pause_left = R::kPause;
    for (int i = 0; i < 20; ++i, ++key) {
        CHECK(std::string(calls.run(key)) == "direct");
        CHECK(std::string(calls.run(key)) == "direct");
        pause_left -= 2;
    }
    CHECK(calls.captured == int(churned));
    // ...while a kept graph (the last captured key's) still replays.
    CHECK(std::string(calls.run(100 + churned - 1)) == "replayed");
    // After the pause, a repeated key is captured and replayed again.
    for (; pause_left; --pause_left, ++key) CHECK(std::string(calls.run(key)) == "direct");
    CHECK(std::string(calls.run(key)) == "direct");
    CHECK(std::string(calls.run(key)) == "captured");
    CHECK(std::string(calls.run(key)) == "replayed");
}

TEST_CASE("graphs evicted after replaying do not pause the captures") {
    Calls calls;
    using R = ReplayedLaunches;
    // A full kept set of graphs that replayed...
    for (int round = 0; round < 3; ++round)
        for (uint64_t k = 0; k < R::kGraphs; ++k) calls.run(k);
    CHECK(calls.captured == int(R::kGraphs));
    // ...makes room for new keys without counting them as wasted: each is captured.
    for (uint64_t k = 1000; k < 1000 + 2 * R::kWastedLimit; ++k) {
        CHECK(std::string(calls.run(k)) == "direct");
        CHECK(std::string(calls.run(k)) == "captured");
    }
    CHECK(calls.captured == int(R::kGraphs + 2 * R::kWastedLimit));
}
