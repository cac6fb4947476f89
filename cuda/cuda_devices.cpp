#include "cuda_devices.h"

#include <cstring>

#include "cuda_check.h"
#include "error.h"

namespace tvlm {

void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line) {
    throw Error(std::string(call) + " failed: " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) +
                ") at " + file + ":" + std::to_string(line));
}

CudaDeviceList list_cuda_devices() {
    CudaDeviceList list;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        list.unavailable_reason = std::string("no usable CUDA device (") + cudaGetErrorName(status) + ": " +
                                  cudaGetErrorString(status) + ")";
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

}  // namespace tvlm
