// The CPU reference backend: levels as the GPU would store them, sampled in double
// precision (engine/reference_*). The definition the GPU backends are tested against.
#include <nanobind/stl/string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "python/bindings/arrays.h"
#include "python/bindings/bindings.h"
#include "engine/error.h"
#include "engine/mips/reference_mips.h"
#include "engine/sampling/reference_sampling.h"
#include "engine/textures/texture.h"

namespace tvlm::py {

namespace {

class CpuPyramid {
public:
    CpuPyramid(uint32_t width, uint32_t height, uint32_t layers, const std::string& format, uint32_t levels)
        : desc_{width, height, layers, levels, parse_format(format), false} {
        check_texture_desc(desc_, {16384, 2048, "the CPU backend's limit", "layers", "CPU backend"});
        if (format_info(desc_.format).channels != 4)
            throw Error("pyramids fed from arrays need an RGBA format, not " + format);
        check_reference_chain_memory(width, height, desc_.mip_levels(), layers,
                                     "a CPU pyramid of " + std::to_string(layers) + " image(s) of " +
                                         std::to_string(width) + "x" + std::to_string(height));
        for (uint32_t l = 0; l < layers; ++l) {
            MipLevels chain;
            for (uint32_t m = 0; m < desc_.mip_levels(); ++m) {
                const Extent2D e = level_extent(width, height, m);
                chain.emplace_back(e.width, e.height, 4);
            }
            images_.push_back(std::move(chain));
        }
    }

    void upload(const HostArray& array, uint32_t layer, uint32_t x, uint32_t y) {
        const HostPixels pixels = host_pixels(array);
        if (layer >= desc_.layers || uint64_t{x} + pixels.width > desc_.width ||
            uint64_t{y} + pixels.height > desc_.height)
            throw Error("pixels of " + std::to_string(pixels.width) + "x" + std::to_string(pixels.height) + " at (" +
                        std::to_string(x) + ", " + std::to_string(y) + ") of layer " + std::to_string(layer) +
                        " do not fit a " + std::to_string(desc_.width) + "x" + std::to_string(desc_.height) + "x" +
                        std::to_string(desc_.layers) + " pyramid");
        // A row at a time, straight into level 0: no copy of the image is ever held (nothing
        // here can fail once the checks above passed).
        ImageF& base = images_[layer][0];
        for (uint32_t j = 0; j < pixels.height; ++j) {
            HostPixels row = pixels;
            row.data = static_cast<const uint8_t*>(pixels.data) + size_t{j} * pixels.stride();
            row.height = 1;
            ImageF texels = to_image(row, 4);
            quantize_in_place(texels, desc_.format);
            std::copy(texels.texels.begin(), texels.texels.end(), &base.at(x, y + j, 0));
        }
    }

    void generate_mipmaps(const std::string& filter) {
        const MipFilter f = parse_mip_filter(filter);
        for (MipLevels& chain : images_) regenerate_mip_levels(chain, desc_.format, f, desc_.mip_levels());
    }

    // Stored texel values of one level: [h, w, 4] in the format's component type.
    NumpyArray level(uint32_t level, uint32_t layer) const {
        if (level >= desc_.mip_levels() || layer >= desc_.layers)
            throw Error("level " + std::to_string(level) + " of layer " + std::to_string(layer) +
                        " does not exist: the pyramid has " + std::to_string(desc_.mip_levels()) + " levels and " +
                        std::to_string(desc_.layers) + " layers");
        const ImageF& image = images_[layer][level];
        return owned_array(encode_texels(image, desc_.format), {image.height, image.width, 4},
                           component_dtype(format_info(desc_.format).component));
    }

    // float32 [images * N, C, P, P].
    NumpyArray sample(const PatchLayout& layout, uint32_t channels, uint32_t max_anisotropy) const {
        check_patch_target(layout, {channels, false}, desc_.width, desc_.height, desc_.mip_levels(), desc_.layers,
                           PatchOutput{channels, false}.bytes(layout));
        const uint32_t p = layout.patch_size;
        std::vector<float> values;
        {
            nb::gil_scoped_release release;  // the array below is made with the GIL held again
            values = reference_sample_patches(layout, images_, desc_.format, channels, max_anisotropy);
        }
        return owned_array(std::move(values), {layout.patches.size(), channels, p, p}, nb::dtype<float>());
    }

private:
    TextureDesc desc_;
    std::vector<MipLevels> images_;
};

}  // namespace

void bind_cpu(nb::module_& m) {
    using Release = nb::call_guard<nb::gil_scoped_release>;
    nb::class_<CpuPyramid>(m, "CpuPyramid", "A mip pyramid on the CPU reference backend.")
        .def(nb::init<uint32_t, uint32_t, uint32_t, const std::string&, uint32_t>(), nb::arg("width"),
             nb::arg("height"), nb::arg("layers"), nb::arg("format"), nb::arg("levels"))
        .def("upload", &CpuPyramid::upload, nb::arg("pixels"), nb::arg("layer"), nb::arg("x") = 0, nb::arg("y") = 0,
             Release())
        .def("generate_mipmaps", &CpuPyramid::generate_mipmaps, nb::arg("filter"), Release())
        .def("level", &CpuPyramid::level, nb::arg("level"), nb::arg("layer"))
        .def("sample", &CpuPyramid::sample, nb::arg("layout"), nb::arg("channels"),
             nb::arg("max_anisotropy") = kMaxAnisotropy);
}

}  // namespace tvlm::py
