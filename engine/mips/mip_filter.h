#pragma once
// Mip filters and level sizes, shared by every backend. See docs/architecture.md, "Mip filters".
#include <cstdint>
#include <string_view>

namespace tvlm {

// blit: what vkCmdBlitImage with VK_FILTER_LINEAR computes; each destination texel samples
//       the source bilinearly at (i+0.5)*Ws/Wd. A 2x2 box for even sizes; for odd sizes it
//       gives some source texels zero weight (5 -> 2 uses weights 1/4,3/4 | 3/4,1/4 and
//       ignores texel 2).
// box:  exact area-weighted average; a 2x2 box for even sizes and drops nothing for odd.
// Both filter sRGB formats in linear light.
enum class MipFilter : uint8_t { blit, box };

std::string_view mip_filter_name(MipFilter filter);
MipFilter parse_mip_filter(std::string_view name);  // throws Error listing valid names

struct Extent2D {
    uint32_t width = 0, height = 0;
    bool operator==(const Extent2D&) const = default;
};

// Level l has size max(1, W>>l) x max(1, H>>l).
Extent2D level_extent(uint32_t width, uint32_t height, uint32_t level);
// floor(log2(max(W, H))) + 1: the chain down to 1x1.
uint32_t full_mip_count(uint32_t width, uint32_t height);

}  // namespace tvlm
