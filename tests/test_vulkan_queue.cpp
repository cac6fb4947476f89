// CommandQueue's ordering on the GPU: waits queued for the next submission (wait_before_next)
// hold it back until every one is reached, waits on one semaphore merging into the largest.
#include <doctest/doctest.h>

#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/core/timeline.h"
#include "tests/vulkan_fixture.h"

using namespace tvlm;
using namespace tvlm::test;

TEST_CASE_FIXTURE(VulkanFixture, "a submission waits for the largest of the waits queued on one semaphore") {
    CommandQueue& queue = context.queue();
    TimelineSemaphore released(context.device(), 0, false);
    TimelineSemaphore other(context.device(), 0, false);
    // As a batch of frames rewriting three slots queues them: out of order, one semaphore.
    queue.wait_before_next({released.handle(), 3});
    queue.wait_before_next({released.handle(), 5});
    queue.wait_before_next({released.handle(), 4});
    queue.wait_before_next({other.handle(), 1});
    const uint64_t done = queue.submit([](VkCommandBuffer) {});
    constexpr uint64_t kWhile = 20'000'000;  // 20 ms: long enough for an unheld submission to finish
    released.signal(4);
    other.signal(1);
    CHECK_THROWS_AS(queue.timeline().wait(done, kWhile), Error);  // still held by value 5
    released.signal(5);
    queue.timeline().wait(done, 5'000'000'000);
    CHECK(queue.timeline().value() >= done);
    // The waits were used up: the next submission waits for nothing.
    queue.timeline().wait(queue.submit([](VkCommandBuffer) {}), 5'000'000'000);
}

TEST_CASE_FIXTURE(VulkanFixture, "waits on different semaphores are all kept") {
    CommandQueue& queue = context.queue();
    TimelineSemaphore a(context.device(), 0, false), b(context.device(), 0, false);
    queue.wait_before_next({a.handle(), 2});
    queue.wait_before_next({b.handle(), 7});
    const uint64_t done = queue.submit([](VkCommandBuffer) {});
    a.signal(2);
    CHECK_THROWS_AS(queue.timeline().wait(done, 20'000'000), Error);  // b not reached
    b.signal(7);
    queue.timeline().wait(done, 5'000'000'000);
}
