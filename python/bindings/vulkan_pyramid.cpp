// The Vulkan backend for host arrays: a texture uploaded through staging, box (or blit) mips
// and patches by Vulkan compute, written into a host-visible buffer that becomes the NumPy
// output with no copy. Runs on any Vulkan 1.3 device (lavapipe in CI).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <string>

#include "python/bindings/arrays.h"
#include "python/bindings/bindings.h"
#include "python/bindings/vulkan_device.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "engine/textures/transfer.h"
#include "engine/sampling/vulkan_patch_sampler.h"

namespace tvlm::py {

namespace {

class VulkanPyramid {
public:
    VulkanPyramid(nb::object device, uint32_t width, uint32_t height, uint32_t layers, const std::string& format,
                  uint32_t levels)
        : device_(std::move(device)),
          context_(nb::cast<VulkanDevice&>(device_).context()),
          texture_(Texture::create(context_, {width, height, layers, levels, parse_format(format), false})) {
        if (format_info(texture_.desc().format).channels != 4)
            throw Error("pyramids fed from arrays need an RGBA format, not " + format);
    }

    void upload(const HostArray& array, uint32_t layer, uint32_t x, uint32_t y) {
        context_.queue().wait(tvlm::upload(context_, texture_, host_pixels(array), {layer, 0, x, y}));
    }
    void generate_mipmaps(const std::string& filter) {
        context_.queue().wait(generate_mips(context_, texture_, parse_mip_filter(filter)));
    }
    void update_mipmaps(uint32_t x, uint32_t y, uint32_t width, uint32_t height, uint32_t first_layer,
                        uint32_t layers) {
        context_.queue().wait(update_mips(context_, texture_, {x, y, width, height, first_layer, layers}));
    }
    NumpyArray level(uint32_t level, uint32_t layer) {
        std::vector<uint8_t> bytes = readback(context_, texture_, level, layer);
        const Extent2D e = texture_.extent(level);
        // The bytes are the components, read in place as the format's type.
        return owned_array(std::move(bytes), {e.height, e.width, 4},
                           component_dtype(format_info(texture_.desc().format).component));
    }
    // [images * N, C, P, P] float32 or float16, in a host-visible buffer the shader wrote.
    NumpyArray sample(const PatchLayout& layout, uint32_t channels, bool half) {
        return sample_to_numpy(device_, context_, texture_, sampler_, layout, {channels, half});
    }
    // The sampler's anisotropy for gradient layouts (16, or 1 where the device samples
    // isotropically): what the reference must be told to compare.
    uint32_t max_anisotropy() const { return context_.anisotropy() ? kMaxAnisotropy : 1; }
    // Whether the box filter runs on this device (else blit is the only filter).
    std::string box_unsupported() const { return tvlm::box_unsupported(context_, texture_.desc().format); }

private:
    nb::object device_;  // the VulkanDevice: outlives the texture and every output
    Context& context_;
    Texture texture_;
    std::optional<VulkanPatchSampler> sampler_;  // kept while the layout stays
};

}  // namespace

void bind_vulkan(nb::module_& m) {
    using Release = nb::call_guard<nb::gil_scoped_release>;
    nb::class_<VulkanDevice>(m, "VulkanDevice", "A headless Vulkan context on one device.")
        .def(nb::init<const std::string&, bool>(), nb::arg("selector") = "", nb::arg("validation") = false, Release())
        .def_prop_ro("name", [](VulkanDevice& d) { return d.context().device_info().name; })
        .def_prop_ro("uuid", [](VulkanDevice& d) { return d.context().device_info().uuid.str(); })
        .def_prop_ro("validation", [](VulkanDevice& d) { return d.context().validation(); })
        .def("validation_messages", &VulkanDevice::validation_messages,
             "Warnings and errors of the validation layers so far (validation on only).");
    nb::class_<HostBlock>(m, "_HostBlock");
    nb::class_<VulkanPyramid>(m, "VulkanPyramid", "A mip pyramid in a Vulkan texture.")
        .def(nb::init<nb::object, uint32_t, uint32_t, uint32_t, const std::string&, uint32_t>(), nb::arg("device"),
             nb::arg("width"), nb::arg("height"), nb::arg("layers"), nb::arg("format"), nb::arg("levels"))
        .def("upload", &VulkanPyramid::upload, nb::arg("pixels"), nb::arg("layer"), nb::arg("x") = 0, nb::arg("y") = 0,
             Release())
        .def("generate_mipmaps", &VulkanPyramid::generate_mipmaps, nb::arg("filter"), Release())
        .def("update_mipmaps", &VulkanPyramid::update_mipmaps, nb::arg("x"), nb::arg("y"), nb::arg("width"),
             nb::arg("height"), nb::arg("first_layer"), nb::arg("layers"), Release())
        .def("level", &VulkanPyramid::level, nb::arg("level"), nb::arg("layer"))
        .def("sample", &VulkanPyramid::sample, nb::arg("layout"), nb::arg("channels"), nb::arg("half"))
        .def_prop_ro("max_anisotropy", &VulkanPyramid::max_anisotropy)
        .def("box_unsupported", &VulkanPyramid::box_unsupported);
}

}  // namespace tvlm::py
