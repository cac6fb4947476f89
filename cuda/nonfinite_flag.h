#pragma once
// A word that backward kernels raise when they meet a NaN or infinite gradient, in pinned,
// mapped host memory: the kernels write it over the bus and the host reads it with a plain
// load, so checking costs no sync and no copy. The host sees what the kernels that have
// finished by then wrote: a stream-ordered job's verdict is complete only after a sync.
// Move-only; one per device is enough (kernels only ever raise it).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>

#include "cuda/cuda_check.h"

namespace tvlm {

class NonFiniteFlag {
public:
    NonFiniteFlag() {
        // Portable: any device's kernels may raise it; mapped: they reach it by a pointer.
        TVLM_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_), sizeof(uint32_t),
                                      cudaHostAllocMapped | cudaHostAllocPortable));
        *host_ = 0;
        TVLM_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
    }
    NonFiniteFlag(NonFiniteFlag&& o) noexcept
        : host_(std::exchange(o.host_, nullptr)), device_(std::exchange(o.device_, nullptr)) {}
    NonFiniteFlag& operator=(NonFiniteFlag&& o) noexcept {
        if (this != &o) {
            reset();
            host_ = std::exchange(o.host_, nullptr);
            device_ = std::exchange(o.device_, nullptr);
        }
        return *this;
    }
    NonFiniteFlag(const NonFiniteFlag&) = delete;
    NonFiniteFlag& operator=(const NonFiniteFlag&) = delete;
    ~NonFiniteFlag() { reset(); }

    // What kernels are given (the backward functions' `nonfinite` argument).
    uint32_t* device_word() const { return device_; }

    // Whether a finished kernel raised the flag since the last take; lowers it.
    bool take() {
        volatile uint32_t* word = host_;  // written by the device behind the compiler's back
        if (*word == 0) return false;
        *word = 0;
        return true;
    }

private:
    void reset() {
        if (host_) cudaFreeHost(host_);  // errors at teardown have no one to go to
        host_ = nullptr;
        device_ = nullptr;
    }

    uint32_t* host_ = nullptr;
    uint32_t* device_ = nullptr;
};

}  // namespace tvlm
