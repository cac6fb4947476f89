#include "engine/mips/box_filter.h"

#include <algorithm>
#include <string>

#include "engine/error.h"
#include "engine/mips/mip_filter.h"
#include "shaders/shader_params.h"
#include "shaders/srgb8_buckets.h"
#include "shaders/srgb8_tables.h"

namespace tvlm {

namespace {
constexpr Srgb8TableWords kTables = make_srgb8_table_words();
}  // namespace

BoxTaps box_taps(uint32_t i, uint32_t s) {
    if (s == 1) return {i, 1, {1, 0, 0}, 1};
    if (s % 2 == 0) return {2 * i, 2, {1, 1, 0}, 2};
    const uint32_t d = s / 2;
    return {2 * i, 3, {d - i, d, i + 1}, s};
}

IndexRange box_dependents(uint32_t x0, uint32_t x1, uint32_t s) {
    const uint32_t d = std::max(1u, s >> 1);
    if (s == 1) return {x0, x1};
    // Destination i spans [i*s, (i+1)*s) in units of 1/d source texels; source j spans
    // [j*d, (j+1)*d). They overlap iff i*s < x1*d and (i+1)*s > x0*d.
    const uint64_t first = uint64_t{x0} * d / s;
    const uint64_t end = (uint64_t{x1} * d + s - 1) / s;
    return {static_cast<uint32_t>(first), static_cast<uint32_t>(std::min<uint64_t>(end, d))};
}

uint32_t srgb8_linear(uint32_t byte) { return kSrgb8Linear[byte]; }

uint32_t srgb8_encode(double n, double d) {
    // Thresholds times D stay below 2^53: exact in double (N and D are integers).
    const uint32_t* above = std::partition_point(kSrgb8Thresholds, kSrgb8Thresholds + 255,
                                                 [&](uint32_t t) { return n >= t * d; });
    return static_cast<uint32_t>(above - kSrgb8Thresholds);
}

std::span<const uint32_t> srgb8_tables() {
    return {reinterpret_cast<const uint32_t*>(&kTables), sizeof(kTables) / sizeof(uint32_t)};
}

uint32_t unorm8_round(uint64_t n, uint64_t d) { return static_cast<uint32_t>((2 * n + d) / (2 * d)); }

}  // namespace tvlm

namespace tvlm {

TexelRect checked_dirty_rect(const DirtyRegion& region, uint32_t width, uint32_t height, uint32_t layers) {
    if (region.width == 0 || region.height == 0 || region.layers == 0)
        throw Error("the changed region is empty: give its width, height and layer count");
    if (region.x >= width || region.width > width - region.x || region.y >= height ||
        region.height > height - region.y || region.first_layer >= layers ||
        region.layers > layers - region.first_layer)
        throw Error("the changed region " + std::to_string(region.width) + "x" + std::to_string(region.height) +
                    " at (" + std::to_string(region.x) + "," + std::to_string(region.y) + "), layers " +
                    std::to_string(region.first_layer) + "+" + std::to_string(region.layers) + " lies outside the " +
                    std::to_string(width) + "x" + std::to_string(height) + "x" + std::to_string(layers) + " texture");
    return {region.x, region.y, region.x + region.width, region.y + region.height};
}

std::vector<BoxPass> plan_box_passes(uint32_t width, uint32_t height, uint32_t levels, TexelRect dirty) {
    constexpr uint32_t tile = TVLM_BOX_TILE;
    const auto next = [](TexelRect r, Extent2D src) {
        const IndexRange x = box_dependents(r.x0, r.x1, src.width), y = box_dependents(r.y0, r.y1, src.height);
        return TexelRect{x.first, y.first, x.end, y.end};
    };
    std::vector<BoxPass> passes;
    for (uint32_t a = 0; a + 1 < levels;) {
        BoxPass pass{a, 1};
        dirty = next(dirty, level_extent(width, height, a));
        pass.tile_x = dirty.x0 / tile;
        pass.tile_y = dirty.y0 / tile;
        pass.tiles_x = (dirty.x1 + tile - 1) / tile - pass.tile_x;
        pass.tiles_y = (dirty.y1 + tile - 1) / tile - pass.tile_y;
        // Chain level a+k+1 while level a+k halves exactly on both axes.
        for (Extent2D e = level_extent(width, height, a + 1);
             pass.levels < TVLM_BOX_MAX_LEVELS && a + pass.levels + 1 < levels && e.width % 2 == 0 && e.height % 2 == 0;
             e = level_extent(width, height, a + ++pass.levels)) {
            dirty = next(dirty, e);
        }
        passes.push_back(pass);
        a += pass.levels;
    }
    return passes;
}

size_t first_box_tail_pass(uint32_t width, uint32_t height, uint32_t levels, const std::vector<BoxPass>& passes,
                           const BoxTailLimits& limits) {
    const auto texels = [&](uint32_t level) {
        const Extent2D e = level_extent(width, height, level);
        return uint64_t{e.width} * e.height;
    };
    for (size_t p = 0; p < passes.size(); ++p) {
        const uint32_t a = passes[p].src_level;
        const bool second_fits = a + 2 >= levels || texels(a + 2) <= limits.second_texels;
        if (levels - 1 - a <= limits.max_levels && texels(a + 1) <= limits.first_texels && second_fits)
            return passes.size() - p >= 2 ? p : passes.size();
    }
    return passes.size();
}

uint32_t box_kind(Format format) {
    const FormatInfo& info = format_info(format);
    if (info.component == ComponentType::u8) return info.srgb ? TVLM_BOX_SRGB8 : TVLM_BOX_UNORM8;
    return info.component == ComponentType::f16 ? TVLM_BOX_FLOAT16 : TVLM_BOX_FLOAT32;
}

}  // namespace tvlm
