#include "engine/processors/in_parts.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <system_error>

#include <unistd.h>

namespace tvlm {

namespace {

// One caller's loop: its parts are claimed one at a time by whichever thread gets there.
struct Loop {
    const std::function<void(int64_t)>* run_part = nullptr;
    int64_t parts = 0;
    std::atomic<int64_t> next{0};
    int entered = 0;  // pool threads inside the loop (guarded by the pool's mutex)
};

void claim_parts(Loop& loop) {
    for (int64_t part = loop.next.fetch_add(1); part < loop.parts; part = loop.next.fetch_add(1))
        (*loop.run_part)(part);
}

thread_local bool in_pool_thread = false;

// Threads that wait for a loop, run its parts, and wait again; never stopped (they wait on
// a condition variable between loops, and go with the process). The pool is never freed, so
// no thread outlives what it reads.
class PartPool {
public:
    static PartPool& instance() {
        static PartPool* pool = new PartPool();
        return *pool;
    }

    void run(int64_t parts, const std::function<void(int64_t)>& run_part) {
        // A forked child has none of the parent's threads (and its mutexes may be held by
        // them): it runs its loops alone.
        if (getpid() != owner_) {
            for (int64_t part = 0; part < parts; ++part) run_part(part);
            return;
        }
        std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
        if (in_pool_thread || !busy.owns_lock() || !started(parts - 1)) {
            for (int64_t part = 0; part < parts; ++part) run_part(part);
            return;
        }
        Loop loop;
        loop.run_part = &run_part;
        loop.parts = parts;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            current_ = &loop;
            ++generation_;
        }
        wake_.notify_all();
        claim_parts(loop);
        // Every part is claimed; wait for the pool threads still running theirs, then take
        // the loop down before any other thread can enter it.
        std::unique_lock<std::mutex> lock(mutex_);
        left_.wait(lock, [&] { return loop.entered == 0; });
        current_ = nullptr;
    }

private:
    // Whether at least one pool thread runs, starting up to `wanted` of them (fewer where
    // the system refuses a thread).
    bool started(int64_t wanted) {
        while (threads_ < wanted) {
            try {
                std::thread([this] { serve(); }).detach();
            } catch (const std::system_error&) { break; }
            ++threads_;
        }
        return threads_ > 0;
    }

    void serve() {
        in_pool_thread = true;
        uint64_t seen = 0;
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return generation_ != seen; });
            seen = generation_;
            Loop* loop = current_;
            if (!loop) continue;
            ++loop->entered;
            lock.unlock();
            claim_parts(*loop);
            lock.lock();
            if (--loop->entered == 0) left_.notify_all();
        }
    }

    const pid_t owner_ = getpid();
    std::mutex busy_;  // one caller's loop at a time
    std::mutex mutex_;
    std::condition_variable wake_, left_;
    Loop* current_ = nullptr;
    uint64_t generation_ = 0;
    int64_t threads_ = 0;  // guarded by busy_
};

}  // namespace

void run_parts(int64_t parts, const std::function<void(int64_t)>& run_part) {
    if (parts <= 1) {  // nothing for the pool to share
        if (parts == 1) run_part(0);
        return;
    }
    PartPool::instance().run(parts, run_part);
}

}  // namespace tvlm
