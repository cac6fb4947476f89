#pragma once
// Does Vulkan -> CUDA interop work on this device? A small end-to-end check for `tvlm info`.
#include <string>

#include "engine/core/device_info.h"

namespace tvlm {

struct InteropProbe {
    bool works = false;
    std::string detail;  // what was checked, or why it failed
};

// Creates a context on `device`, links CUDA, writes a 16x16 texture with mips in Vulkan,
// reads every level in CUDA after an in-stream semaphore wait, and compares.
InteropProbe probe_interop(const DeviceInfo& device);

}  // namespace tvlm
