// What devices this machine has and which backends each serves: Vulkan devices with their
// CUDA twins (equal UUIDs), and CUDA devices.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "python/bindings/bindings.h"
#include "engine/error.h"
#include "engine/core/instance.h"
#ifdef TVLM_HAVE_CUDA
#include "cuda/cuda_devices.h"
#endif

namespace tvlm::py {

namespace {

std::string uuid_string(const std::array<uint8_t, 16>& bytes) { return Uuid{bytes}.str(); }

nb::dict vulkan_devices() {
    nb::dict result;
    nb::list devices;
    try {
        const Instance instance(false);
        for (const DeviceInfo& d : instance.devices()) {
            nb::dict device;
            device["index"] = d.index;
            device["name"] = d.name;
            device["type"] = d.type;
            device["uuid"] = d.uuid.str();
            device["driver"] = d.driver;
            device["memory_export"] = d.memory_fd_export;
            devices.append(device);
        }
        result["unavailable"] = "";
    } catch (const Error& e) { result["unavailable"] = std::string(e.what()); }
    result["devices"] = devices;
    return result;
}

nb::dict cuda_devices() {
    nb::dict result;
    nb::list devices;
#ifdef TVLM_HAVE_CUDA
    const CudaDeviceList list = list_cuda_devices();
    for (const CudaDeviceInfo& d : list.devices) {
        nb::dict device;
        device["index"] = d.ordinal;
        device["name"] = d.name;
        device["uuid"] = uuid_string(d.uuid);
        device["compute_capability"] = std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor);
        device["total_memory"] = d.total_memory;
        devices.append(device);
    }
    result["unavailable"] = list.unavailable_reason;
#else
    result["unavailable"] = "texturevlm was built without the CUDA toolkit (no nvcc at build time)";
#endif
    result["devices"] = devices;
    return result;
}

}  // namespace

void bind_devices(nb::module_& m) {
    m.def("vulkan_devices", &vulkan_devices, "Vulkan devices: index, name, type, uuid, driver, memory_export.");
    m.def("cuda_devices", &cuda_devices, "CUDA devices: index, name, uuid, compute_capability, total_memory.");
}

}  // namespace tvlm::py
