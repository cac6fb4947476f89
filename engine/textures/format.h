#pragma once
// Texture formats the engine supports and how their texels are stored (no graphics API:
// Vulkan's formats are vk_format() in texture.h, CUDA's cuda_channel_format()).
#include <cstdint>
#include <string_view>

namespace tvlm {

enum class Format : uint8_t { rgba8_unorm, rgba8_srgb, rgba16f, rgba32f, r32f };

inline constexpr Format kAllFormats[] = {Format::rgba8_unorm, Format::rgba8_srgb, Format::rgba16f, Format::rgba32f,
                                         Format::r32f};

// How one component is stored in memory.
enum class ComponentType : uint8_t { u8, f16, f32 };

struct FormatInfo {
    std::string_view name;  // "rgba8", "rgba8_srgb", "rgba16f", "rgba32f", "r32f"
    ComponentType component;
    uint32_t channels;  // 4, or 1 for r32f
    bool srgb;          // colour channels are sRGB-encoded, filtered in linear light
    uint32_t texel_bytes() const;
};

const FormatInfo& format_info(Format format);
size_t component_bytes(ComponentType type);

// Parses a format name as printed by format_info().name; throws Error listing the valid names.
Format parse_format(std::string_view name);

}  // namespace tvlm
