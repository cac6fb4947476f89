#include "interop/cuda_device.h"

#include <string>

#include "cuda/cuda_check.h"
#include "cuda/cuda_devices.h"
#include "engine/error.h"

namespace tvlm {

namespace {
std::string uuid_text(const std::array<uint8_t, 16>& bytes) {
    Uuid u;
    u.bytes = bytes;
    return u.str();
}
}  // namespace

int select_cuda_device(const DeviceInfo& vulkan_device) {
    const CudaDeviceList list = list_cuda_devices();
    for (const CudaDeviceInfo& d : list.devices)
        if (d.uuid == vulkan_device.uuid.bytes) {
            TVLM_CUDA_CHECK(cudaSetDevice(d.ordinal));
            return d.ordinal;
        }
    std::string cuda_side;
    for (const CudaDeviceInfo& d : list.devices)
        cuda_side += "\n  CUDA " + std::to_string(d.ordinal) + ": " + d.name + " UUID " + uuid_text(d.uuid);
    if (list.devices.empty()) cuda_side = "\n  (none: " + list.unavailable_reason + ")";
    throw Error("no CUDA device is the same GPU as Vulkan device '" + vulkan_device.name + "' (UUID " +
                vulkan_device.uuid.str() + "). CUDA devices:" + cuda_side +
                "\nPick the NVIDIA GPU with --device (tvlm info shows which Vulkan device matches CUDA)");
}

}  // namespace tvlm
