#pragma once
// A loop over [0, count) split across threads, for the host processors' passes.
#include <algorithm>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

namespace tvlm {

// body(first, end) over [0, count) in parts on up to hardware_concurrency() threads (16 at
// most), where the work (`work` per item) pays for them; the caller runs the first part.
// Parts must be independent: the result is then the same whatever the split. A thread that
// cannot be started leaves its part to the caller. `body` must not throw (nothing it calls
// allocates).
template <class Body>
void in_parts(int64_t count, int64_t work, const Body& body) {
    constexpr int64_t kWorkPerThread = int64_t{1} << 21;
    const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
    const int64_t parts = std::clamp<int64_t>(count * work / kWorkPerThread, 1, std::min<int64_t>(cores, 16));
    const int64_t per = (count + parts - 1) / parts;
    std::vector<std::thread> workers;
    std::vector<int64_t> left_over;
    for (int64_t first = per; first < count; first += per) {
        try {
            workers.emplace_back([&body, first, end = std::min(count, first + per)] { body(first, end); });
        } catch (const std::system_error&) { left_over.push_back(first); }
    }
    body(0, std::min(count, per));
    for (const int64_t first : left_over) body(first, std::min(count, first + per));
    for (std::thread& w : workers) w.join();
}

}  // namespace tvlm
