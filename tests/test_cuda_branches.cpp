// Stream branches (cuda_pipelines/stream_branches.h): each branch starts after the work the
// caller's stream queued before the fork and ends before the work it queues after the join,
// directly and inside a CUDA graph capture; a branch that throws stops the later ones and
// still leaves the caller's stream joined.
#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/cuda_handle.h"
#include "cuda/device_buffer.h"
#include "cuda_pipelines/stream_branches.h"
#include "tests/device_read_back.h"

using namespace tvlm;

namespace {

constexpr size_t kBytes = size_t{64} << 20;  // large enough that a memset behind it is still queued
constexpr size_t kBranches = 10;             // more than the side streams kept: some take turns

// Branch k copies `source` into its own slice of `copies`; the caller's stream first fills
// `source` behind a long memset, then reads every copy back after the join.
void fork_copies(const DeviceBuffer<unsigned char>& slow, const DeviceBuffer<unsigned char>& source,
                 const DeviceBuffer<unsigned char>& copies, unsigned char value, cudaStream_t stream) {
    TVLM_CUDA_CHECK(cudaMemsetAsync(slow.data(), 1, slow.size(), stream));
    TVLM_CUDA_CHECK(cudaMemsetAsync(source.data(), value, source.size(), stream));
    run_on_branches(
        kBranches,
        [&](size_t k, cudaStream_t s) {
            TVLM_CUDA_CHECK(cudaMemcpyAsync(copies.data() + k * source.size(), source.data(), source.size(),
                                            cudaMemcpyDeviceToDevice, s));
        },
        stream);
    // After the join: overwrite the source; a branch still reading it would copy this value.
    TVLM_CUDA_CHECK(cudaMemsetAsync(source.data(), 0xEE, source.size(), stream));
}

bool all_equal(const std::vector<unsigned char>& v, unsigned char value) {
    for (unsigned char x : v)
        if (x != value) return false;
    return true;
}

}  // namespace

TEST_CASE("stream branches run after the stream's earlier work and before its later work") {
    const CudaStream stream = make_stream();
    const DeviceBuffer<unsigned char> slow(kBytes), source(1 << 20), copies(kBranches << 20);
    for (const int v : {7, 9}) {  // twice: the kept streams and events are reused
        const auto value = static_cast<unsigned char>(v);
        TVLM_CUDA_CHECK(cudaMemset(copies.data(), 0, copies.size()));
        fork_copies(slow, source, copies, value, stream.get());
        CHECK(all_equal(read_back(copies, stream.get()), value));
    }
}

TEST_CASE("stream branches inside a CUDA graph capture become the graph's branches, joined") {
    const CudaStream stream = make_stream();
    const DeviceBuffer<unsigned char> slow(kBytes), source(1 << 20), copies(kBranches << 20);
    TVLM_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    fork_copies(slow, source, copies, 5, stream.get());
    cudaGraph_t raw = nullptr;
    TVLM_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &raw));  // fails where a side stream was left unjoined
    const CudaGraph graph(raw);
    cudaGraphExec_t exec_raw = nullptr;
    TVLM_CUDA_CHECK(cudaGraphInstantiate(&exec_raw, graph.get(), 0));
    const CudaGraphExec exec(exec_raw);
    TVLM_CUDA_CHECK(cudaMemset(copies.data(), 0, copies.size()));
    TVLM_CUDA_CHECK(cudaGraphLaunch(exec.get(), stream.get()));
    CHECK(all_equal(read_back(copies, stream.get()), 5));
}

TEST_CASE("a branch that throws stops the later branches and leaves the stream joined") {
    const CudaStream stream = make_stream();
    const DeviceBuffer<unsigned char> copies(4 << 20);
    TVLM_CUDA_CHECK(cudaMemset(copies.data(), 0, copies.size()));
    std::vector<size_t> ran;
    const auto run = [&](size_t k, cudaStream_t s) {
        if (k == 2) throw std::runtime_error("branch 2 refuses");
        ran.push_back(k);
        TVLM_CUDA_CHECK(cudaMemsetAsync(copies.data() + (k << 20), 3, 1 << 20, s));
    };
    CHECK_THROWS_WITH(run_on_branches(4, run, stream.get()), "branch 2 refuses");
    CHECK(ran == std::vector<size_t>{0, 1});
    const std::vector<unsigned char> host = read_back(copies, stream.get());
    CHECK(host[0] == 3);
    CHECK(host[(1 << 20) + 5] == 3);
    CHECK(host[(2 << 20) + 5] == 0);
    CHECK(host[(3 << 20) + 5] == 0);
    // The same stream captures afterwards: no side stream is left inside an old fork.
    TVLM_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    run_on_branches(
        2, [&](size_t k, cudaStream_t s) { TVLM_CUDA_CHECK(cudaMemsetAsync(copies.data() + (k << 20), 4, 16, s)); },
        stream.get());
    cudaGraph_t raw = nullptr;
    TVLM_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &raw));
    const CudaGraph graph(raw);
}
