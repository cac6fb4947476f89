#pragma once
// A loop over [0, count) split across the host's cores, for the host processors' passes.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <thread>
#include <type_traits>

namespace tvlm {

// How many parts in_parts(count, work, ...) splits its loop into: one where the work is
// small, up to hardware_concurrency() (16 at most) where it pays for them.
inline int64_t part_count(int64_t count, int64_t work) {
    constexpr int64_t kWorkPerThread = int64_t{1} << 21;
    const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
    return std::clamp<int64_t>(count * work / kWorkPerThread, 1, std::min<int64_t>(cores, 16));
}

// run_part(i) for every i in [0, parts), on the process's pool of threads (started at the
// first call that needs it, kept for the process: starting threads per call cost more than
// a small image's passes) and the caller, which runs parts too and returns when all have.
// Where the pool is busy with another caller's loop, or the caller is one of its threads,
// the caller runs every part itself.
void run_parts(int64_t parts, const std::function<void(int64_t)>& run_part);

// body(first, end) over [0, count) in part_count(count, work) parts (`work` per item). A
// body taking a third argument gets its part's index, below part_count(): scratch of its
// own, made before the loop. Parts must be independent: the result is then the same
// whatever the split and whichever thread runs a part. `body` must not throw (nothing it
// calls allocates).
template <class Body>
void in_parts(int64_t count, int64_t work, const Body& body) {
    if (count <= 0) return;
    const int64_t parts = part_count(count, work);
    const int64_t per = (count + parts - 1) / parts;
    const auto run = [&body, per, count](int64_t part) {
        const int64_t first = part * per, end = std::min(count, first + per);
        if (first >= end) return;
        if constexpr (std::is_invocable_v<const Body&, int64_t, int64_t, int64_t>) body(first, end, part);
        else body(first, end);
    };
    if (parts == 1) run(0);
    else run_parts(parts, run);
}

}  // namespace tvlm
