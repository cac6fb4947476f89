#include "engine/textures/format.h"

#include <string>

#include "engine/error.h"

namespace tvlm {

namespace {
constexpr FormatInfo kInfos[] = {
    {"rgba8", ComponentType::u8, 4, false},    {"rgba8_srgb", ComponentType::u8, 4, true},
    {"rgba16f", ComponentType::f16, 4, false}, {"rgba32f", ComponentType::f32, 4, false},
    {"r32f", ComponentType::f32, 1, false},
};
}  // namespace

size_t component_bytes(ComponentType type) {
    switch (type) {
        case ComponentType::u8: return 1;
        case ComponentType::f16: return 2;
        case ComponentType::f32: return 4;
    }
    return 0;
}

uint32_t FormatInfo::texel_bytes() const { return channels * static_cast<uint32_t>(component_bytes(component)); }

const FormatInfo& format_info(Format format) { return kInfos[static_cast<size_t>(format)]; }

Format parse_format(std::string_view name) {
    std::string valid;
    for (Format f : kAllFormats) {
        if (format_info(f).name == name) return f;
        valid += (valid.empty() ? "" : ", ") + std::string(format_info(f).name);
    }
    throw Error("unknown format '" + std::string(name) + "': expected one of " + valid);
}

}  // namespace tvlm
