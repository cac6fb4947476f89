#pragma once
// The Vulkan context a Python VulkanDevice holds, and the host-visible memory NumPy outputs
// live in (shared by the pyramid and the video bindings).
#include <optional>
#include <string>
#include <vector>

#include "python/bindings/bindings.h"
#include "engine/core/context.h"
#include "engine/core/host_buffer.h"
#include "python/bindings/arrays.h"
#include "engine/textures/texture.h"
#include "engine/sampling/vulkan_patch_sampler.h"

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

// [N, C, P, P] float32 or float16 patches of `texture`, sampled into a new host-visible
// buffer that the returned NumPy array views (the buffer keeps `device` alive). `sampler`
// is kept across calls while the layout and output stay (a new one uploads the layout).
inline NumpyArray sample_to_numpy(const nb::object& device, Context& context, Texture& texture,
                                  std::optional<VulkanPatchSampler>& sampler, const PatchLayout& layout,
                                  const PatchOutput& output) {
    auto* block = new HostBlock{device, HostBuffer(context.physical_device(), context.device(), output.bytes(layout),
                                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT)};
    nb::object owner = nb::cast(block, nb::rv_policy::take_ownership);
    {
        nb::gil_scoped_release release;
        if (!sampler || !sampler->layout().same_sampling(layout) || sampler->output().channels != output.channels ||
            sampler->output().half != output.half)
            sampler.emplace(context, layout, output);
        context.queue().wait(sampler->sample(texture, block->buffer.handle(), 0, block->buffer.size()));
    }
    const uint32_t p = layout.patch_size;
    return array_over(block->buffer.data(), {layout.patches.size(), output.channels, p, p},
                      output.half ? component_dtype(ComponentType::f16) : nb::dtype<float>(), owner);
}

}  // namespace tvlm::py
