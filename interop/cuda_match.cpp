#include "interop/cuda_match.h"

#ifdef TVLM_HAVE_CUDA
#include "cuda/cuda_devices.h"
#endif

namespace tvlm {

CudaMatch match_cuda_device(const DeviceInfo& vulkan_device) {
    CudaMatch match;
#ifdef TVLM_HAVE_CUDA
    match.cuda_built = true;
    const CudaDeviceList list = list_cuda_devices();
    match.unavailable = list.unavailable_reason;
    for (const CudaDeviceInfo& d : list.devices)
        if (d.uuid == vulkan_device.uuid.bytes) {
            match.ordinal = d.ordinal;
            match.name = d.name;
        }
#else
    (void)vulkan_device;
    match.unavailable = "texturevlm was built without CUDA (no nvcc at configure time)";
#endif
    return match;
}

}  // namespace tvlm
