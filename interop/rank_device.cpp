#include "interop/rank_device.h"

#include <cstring>
#include <string>

#include "engine/error.h"
#ifdef TVLM_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace tvlm {

namespace {

struct CurrentCuda {
    int ordinal = 0;
    std::string name;
    Uuid uuid;
};

CurrentCuda current_cuda() {
#ifdef TVLM_HAVE_CUDA
    CurrentCuda c;
    cudaError_t e = cudaGetDevice(&c.ordinal);
    cudaDeviceProp prop{};
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, c.ordinal);
    if (e != cudaSuccess)
        throw Error(std::string("no current CUDA device (") + cudaGetErrorString(e) +
                    "): the engine of a rank follows the CUDA device the process made current");
    c.name = prop.name;
    std::memcpy(c.uuid.bytes.data(), prop.uuid.bytes, c.uuid.bytes.size());
    return c;
#else
    throw Error("texturevlm was built without CUDA: choosing the Vulkan device by the current CUDA device needs it");
#endif
}

}  // namespace

DeviceSelector selector_for_current_cuda_device() {
    DeviceSelector s;
    s.uuid = current_cuda().uuid;
    return s;
}


Context open_rank_context(bool validation) {
    const CurrentCuda c = current_cuda();
    ContextDesc desc;
    desc.device.uuid = c.uuid;
    desc.validation = desc.validation || validation;
    try {
        return Context(desc);
    } catch (const Error& e) {
        throw Error("CUDA device " + std::to_string(c.ordinal) + " (" + c.name + ", UUID " + c.uuid.str() +
                    ") has no Vulkan twin; is the NVIDIA Vulkan driver visible to this process? " + e.what());
    }
}

}  // namespace tvlm
