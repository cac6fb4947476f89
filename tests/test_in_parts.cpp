// in_parts (engine/processors/in_parts.h), the host processors' loop over the cores on a
// pool of threads kept for the process: every item runs exactly once whatever the split,
// from several callers at once, nested, and in a forked child (which has none of the pool's
// threads).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/processors/in_parts.h"

namespace {

constexpr int64_t kHeavy = int64_t{1} << 22;  // work per item enough for every core

// How many times in_parts(count, work) ran each item, checking each part's index.
std::vector<int> runs_per_item(int64_t count, int64_t work) {
    std::vector<std::atomic<int>> runs(size_t(count > 0 ? count : 0));
    const int64_t parts = tvlm::part_count(count, work);
    std::atomic<bool> bad_part{false};
    tvlm::in_parts(count, work, [&](int64_t first, int64_t end, int64_t part) {
        if (part < 0 || part >= parts || first >= end) bad_part = true;
        for (int64_t i = first; i < end; ++i) runs[size_t(i)].fetch_add(1);
    });
    CHECK_FALSE(bad_part.load());
    std::vector<int> out;
    for (auto& r : runs) out.push_back(r.load());
    return out;
}

bool each_once(const std::vector<int>& runs) {
    for (int r : runs)
        if (r != 1) return false;
    return true;
}

}  // namespace

TEST_CASE("in_parts runs every item once, whatever the count and the split") {
    for (int64_t count : {0, 1, 2, 3, 7, 16, 17, 100, 1001})
        for (int64_t work : {int64_t{1}, int64_t{1} << 20, kHeavy}) {
            CAPTURE(count);
            CAPTURE(work);
            CHECK(each_once(runs_per_item(count, work)));
        }
    // A body without the part index.
    std::vector<std::atomic<int>> runs(333);
    tvlm::in_parts(333, kHeavy, [&](int64_t first, int64_t end) {
        for (int64_t i = first; i < end; ++i) runs[size_t(i)].fetch_add(1);
    });
    for (auto& r : runs) CHECK(r.load() == 1);
}

TEST_CASE("in_parts from several threads at once, and nested, runs every item once") {
    std::atomic<int> wrong{0};
    std::vector<std::thread> callers;
    for (int t = 0; t < 6; ++t)
        callers.emplace_back([&wrong, t] {
            for (int k = 0; k < 200; ++k)
                if (!each_once(runs_per_item(50 + t * 7 + k % 5, kHeavy))) ++wrong;
        });
    for (auto& c : callers) c.join();
    CHECK(wrong.load() == 0);
    // A part that runs a loop of its own (on a pool thread: it runs it itself).
    std::atomic<int64_t> total{0};
    tvlm::in_parts(8, kHeavy, [&](int64_t first, int64_t end) {
        for (int64_t i = first; i < end; ++i) tvlm::in_parts(10, kHeavy, [&](int64_t a, int64_t b) { total += b - a; });
    });
    CHECK(total.load() == 80);
}

TEST_CASE("in_parts in a forked child runs its loop without the parent's pool") {
    CHECK(each_once(runs_per_item(64, kHeavy)));  // the pool is started in the parent
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        alarm(20);  // a hang fails the test rather than stalling the suite
        std::vector<int> runs = runs_per_item(500, kHeavy);
        _exit(each_once(runs) ? 0 : 1);
    }
    int status = 0;
    pid_t done = 0;
    for (int waited = 0; waited < 300 && (done = waitpid(child, &status, WNOHANG)) == 0; ++waited)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (done == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
    }
    REQUIRE(done == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
