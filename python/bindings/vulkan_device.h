#pragma once
// The Vulkan context a Python VulkanDevice holds, and the host-visible memory NumPy outputs
// live in (shared by the pyramid and the video bindings).
#include <string>
#include <vector>

#include "bindings.h"
#include "context.h"
#include "host_buffer.h"

namespace tvlm::py {

// The engine's Context; textures and outputs keep the Python object alive (keep_alive).
class VulkanDevice {
public:
    VulkanDevice(const std::string& selector, bool validation)
        : context_(ContextDesc{DeviceSelector::parse(selector), validation}) {}
    Context& context() { return context_; }
    std::vector<std::string> validation_messages() const {
        return const_cast<Context&>(context_).validation_log().messages();
    }

private:
    Context context_;
};

// Memory a NumPy output lives in: the sampler's host-visible buffer, and the device that
// owns it (freed after the array, never before).
struct HostBlock {
    nb::object device;  // declared first: released after the buffer is destroyed
    HostBuffer buffer;
};

}  // namespace tvlm::py
