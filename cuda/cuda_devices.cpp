#include "cuda/cuda_devices.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "cuda/cuda_check.h"
#include "engine/error.h"

namespace tvlm {

namespace {

// What a user can act on where CUDA cannot start at all; empty for other errors. Without a
// driver the runtime reports an "insufficient" driver, which reads like an old one.
std::string missing_driver_text(cudaError_t error) {
    if (error == cudaErrorInsufficientDriver)
        return "no NVIDIA driver was found, or it is older than this build's CUDA runtime needs: install or update "
               "the NVIDIA driver, or use the Vulkan or CPU backend";
    if (error == cudaErrorNoDevice) return "no NVIDIA GPU was found: use the Vulkan or CPU backend";
    return {};
}

}  // namespace

void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line) {
    // A failed call also leaves its error as the thread's last error (unless it is sticky:
    // then the context is lost anyway). Cleared here, or the next call's cudaGetLastError()
    // after a good launch would report this failure again: an allocation that ran out of
    // memory would fail the call after it too.
    cudaGetLastError();
    const std::string missing = missing_driver_text(error);
    if (!missing.empty()) throw Error(missing + " (" + cudaGetErrorName(error) + " from " + call + ")");
    throw Error(std::string(call) + " failed: " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ") at " +
                file + ":" + std::to_string(line));
}

CudaDeviceList list_cuda_devices() {
    CudaDeviceList list;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        const std::string missing = missing_driver_text(status);
        list.unavailable_reason = !missing.empty() ? missing + " (" + cudaGetErrorName(status) + ")"
                                                   : std::string("no usable CUDA device (") + cudaGetErrorName(status) +
                                                         ": " + cudaGetErrorString(status) + ")";
        cudaGetLastError();  // clear the sticky-free error so later calls start clean
        return list;
    }
    if (count == 0) list.unavailable_reason = "no CUDA device on this machine";
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        TVLM_CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
        CudaDeviceInfo d;
        d.ordinal = i;
        d.name = prop.name;
        std::memcpy(d.uuid.data(), prop.uuid.bytes, 16);
        d.compute_major = prop.major;
        d.compute_minor = prop.minor;
        d.total_memory = prop.totalGlobalMem;
        list.devices.push_back(std::move(d));
    }
    return list;
}

int current_device_multiprocessors() {
    int device = 0, processors = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&device));
    TVLM_CUDA_CHECK(cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device));
    return processors;
}

int current_device_compute_major() {
    int device = 0, major = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&device));
    TVLM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    return major;
}

void allow_dynamic_shared(const void* kernel, size_t bytes) {
    int device = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&device));
    using Key = std::tuple<int, const void*>;
    static std::mutex mutex;
    static std::map<Key, size_t> allowed;
    const std::lock_guard<std::mutex> lock(mutex);
    size_t& most = allowed[Key{device, kernel}];
    if (most >= bytes) return;
    TVLM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    most = bytes;
}

uint32_t resident_wave_blocks(const void* kernel, int threads, size_t dynamic_shared) {
    int device = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&device));
    using Key = std::tuple<int, const void*, int, size_t>;
    static std::mutex mutex;
    static std::map<Key, uint32_t> known;
    const Key key{device, kernel, threads, dynamic_shared};
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto found = known.find(key); found != known.end()) return found->second;
    // The opt-in counts the kernel's static shared memory too, so it is asked for any
    // dynamic amount, not only above 48 KB.
    if (dynamic_shared > 0) allow_dynamic_shared(kernel, dynamic_shared);
    int per_multiprocessor = 0;
    TVLM_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, kernel, threads, dynamic_shared));
    const auto blocks = static_cast<uint32_t>(std::max(1, per_multiprocessor) * current_device_multiprocessors());
    known.emplace(key, blocks);
    return blocks;
}

}  // namespace tvlm
