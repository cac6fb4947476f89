#include "cuda_pipelines/pinned_staging.h"

#include <algorithm>
#include <cstring>
#include <system_error>

#include "cuda/cuda_check.h"
#include "engine/error.h"

namespace tvlm {

namespace {

uint32_t default_threads() {
    const uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
    return std::clamp(cores / 2, 2u, 8u);
}

// Stripe `index` of `parts` of `bytes`, on 64-byte boundaries (cache lines apart).
std::pair<size_t, size_t> stripe(size_t bytes, uint32_t index, uint32_t parts) {
    const size_t per = (bytes / parts + 63) / 64 * 64;
    const size_t begin = std::min(bytes, per * index);
    return {begin, index + 1 == parts ? bytes - begin : std::min(bytes - begin, per)};
}

}  // namespace

PinnedStaging::PinnedStaging(size_t chunk_bytes, uint32_t buffers, uint32_t threads) : chunk_bytes_(chunk_bytes) {
    if (chunk_bytes == 0 || buffers == 0) throw Error("pinned staging needs a chunk size and at least one buffer");
    for (uint32_t i = 0; i < buffers; ++i) {
        buffers_.push_back(allocate_pinned(chunk_bytes));
        free_.push_back(make_event());
        TVLM_CUDA_CHECK(cudaEventRecord(free_.back().get()));  // free from the start
    }
    const uint32_t total = threads ? threads : default_threads();
    // A thread the system refuses (a container's limit) leaves the copies to fewer: threads()
    // counts the ones that run. Throwing here instead would end the process, with the
    // started threads still joinable.
    for (uint32_t i = 1; i < total; ++i) {
        try {
            workers_.emplace_back([this, i] { work(i); });
        } catch (const std::system_error&) { break; }
    }
}

PinnedStaging::~PinnedStaging() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    start_.notify_all();
    for (std::thread& t : workers_) t.join();
    for (const CudaEvent& e : free_) cudaEventSynchronize(e.get());  // no device copy reads a freed buffer
}

void PinnedStaging::work(uint32_t index) {
    uint64_t seen = 0;
    while (true) {
        std::unique_lock lock(mutex_);
        start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        uint8_t* dst = job_dst_;
        const uint8_t* src = job_src_;
        const size_t bytes = job_bytes_;
        lock.unlock();
        const auto [begin, count] = stripe(bytes, index, threads());
        std::memcpy(dst + begin, src + begin, count);
        lock.lock();
        if (--pending_ == 0) done_.notify_one();
    }
}

void PinnedStaging::parallel_copy(void* dst, const void* src, size_t bytes) {
    {
        const std::lock_guard lock(mutex_);
        job_dst_ = static_cast<uint8_t*>(dst);
        job_src_ = static_cast<const uint8_t*>(src);
        job_bytes_ = bytes;
        pending_ = uint32_t(workers_.size());
        ++generation_;
    }
    start_.notify_all();
    const auto [begin, count] = stripe(bytes, 0, threads());
    std::memcpy(static_cast<uint8_t*>(dst) + begin, static_cast<const uint8_t*>(src) + begin, count);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
}

void PinnedStaging::copy(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
    if (bytes == 0) return;
    if (!dst || !src) throw Error("pinned staging: null source or destination");
    for (size_t offset = 0, chunk = 0; offset < bytes; offset += chunk_bytes_, ++chunk) {
        const size_t i = chunk % buffers_.size();
        const size_t n = std::min(chunk_bytes_, bytes - offset);
        TVLM_CUDA_CHECK(cudaEventSynchronize(free_[i].get()));  // its last device copy is done
        parallel_copy(buffers_[i].get(), static_cast<const uint8_t*>(src) + offset, n);
        TVLM_CUDA_CHECK(
            cudaMemcpyAsync(static_cast<uint8_t*>(dst) + offset, buffers_[i].get(), n, cudaMemcpyHostToDevice, stream));
        TVLM_CUDA_CHECK(cudaEventRecord(free_[i].get(), stream));
    }
}

}  // namespace tvlm
