// The embedded test chart (engine/textures/test_chart.h): the default input of examples and tests.
#include <string>

#include "python/bindings/arrays.h"
#include "python/bindings/bindings.h"
#include "engine/error.h"
#include "engine/textures/test_chart.h"

namespace tvlm::py {

void bind_chart(nb::module_& m) {
    m.def(
        "test_chart",
        [](uint32_t width, uint32_t height) {
            if (width == 0 || height == 0 || width > 16384 || height > 16384)
                throw Error("test chart size " + std::to_string(width) + "x" + std::to_string(height) +
                            " must be within 1..16384 on each side");
            Rgba8Image chart = make_test_chart(width, height);
            return owned_array(std::move(chart.texels), {height, width, 4}, nb::dtype<uint8_t>());
        },
        nb::arg("width"), nb::arg("height"), "The test chart as uint8 [height, width, 4] (RGBA).");
}

}  // namespace tvlm::py
