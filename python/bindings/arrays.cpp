#include "python/bindings/arrays.h"

#include <string>

#include "engine/error.h"

namespace tvlm::py {

nb::dlpack::dtype component_dtype(ComponentType type) {
    switch (type) {
        case ComponentType::u8: return nb::dtype<uint8_t>();
        case ComponentType::f16: return {uint8_t(nb::dlpack::dtype_code::Float), 16, 1};
        case ComponentType::f32: break;
    }
    return nb::dtype<float>();
}

HostPixels host_pixels(const HostArray& array) {
    const nb::dlpack::dtype d = array.dtype();
    ComponentType type;
    if (d == nb::dtype<uint8_t>()) type = ComponentType::u8;
    else if (d == component_dtype(ComponentType::f16)) type = ComponentType::f16;
    else if (d == nb::dtype<float>()) type = ComponentType::f32;
    else throw Error("host pixels must be uint8, float16 or float32: convert the array first");
    const size_t channels = array.shape(2);
    if (channels != 3 && channels != 4)
        throw Error("host pixels need 3 or 4 channels, not " + std::to_string(channels));
    return {array.data(), type, uint32_t(array.shape(1)), uint32_t(array.shape(0)), uint32_t(channels), 0};
}

}  // namespace tvlm::py
