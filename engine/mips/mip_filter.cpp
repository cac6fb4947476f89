#include "engine/mips/mip_filter.h"

#include <algorithm>
#include <bit>
#include <string>

#include "engine/error.h"

namespace tvlm {

std::string_view mip_filter_name(MipFilter filter) { return filter == MipFilter::blit ? "blit" : "box"; }

MipFilter parse_mip_filter(std::string_view name) {
    if (name == "blit") return MipFilter::blit;
    if (name == "box") return MipFilter::box;
    throw Error("unknown mip filter '" + std::string(name) + "': expected blit or box");
}

Extent2D level_extent(uint32_t width, uint32_t height, uint32_t level) {
    return {std::max(1u, width >> level), std::max(1u, height >> level)};
}

uint32_t full_mip_count(uint32_t width, uint32_t height) {
    return static_cast<uint32_t>(std::bit_width(std::max(width, height)));
}

}  // namespace tvlm
