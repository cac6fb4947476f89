#include "engine/video/changed_tiles.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "engine/error.h"
#include "shaders/shader_params.h"

namespace tvlm {

uint32_t TileGrid::tiles_x() const { return (width + TVLM_CHANGE_TILE - 1) / TVLM_CHANGE_TILE; }
uint32_t TileGrid::tiles_y() const { return (height + TVLM_CHANGE_TILE - 1) / TVLM_CHANGE_TILE; }

std::vector<uint32_t> reference_changed_tiles(std::span<const uint8_t> before, std::span<const uint8_t> after,
                                              const TileGrid& grid, uint32_t threshold) {
    const size_t bytes = size_t{grid.width} * grid.height * grid.layers * 4;
    if (before.size() != bytes || after.size() != bytes)
        throw Error("frames of " + std::to_string(before.size()) + " and " + std::to_string(after.size()) +
                    " bytes; a " + std::to_string(grid.width) + "x" + std::to_string(grid.height) + " RGBA8 frame of " +
                    std::to_string(grid.layers) + " layers has " + std::to_string(bytes));
    std::vector<uint32_t> changed(grid.tile_count(), 0);
    for (uint32_t layer = 0; layer < grid.layers; ++layer)
        for (uint32_t y = 0; y < grid.height; ++y)
            for (uint32_t x = 0; x < grid.width; ++x) {
                const size_t texel = ((size_t{layer} * grid.height + y) * grid.width + x) * 4;
                bool differs = false;
                for (size_t c = 0; c < 4; ++c)
                    differs |= uint32_t(std::abs(int{before[texel + c]} - int{after[texel + c]})) > threshold;
                if (differs)
                    changed[(size_t{layer} * grid.tiles_y() + y / TVLM_CHANGE_TILE) * grid.tiles_x() +
                            x / TVLM_CHANGE_TILE] = 1;
            }
    return changed;
}

namespace {

// A rectangle of tiles [x0, x1) x [y0, y1) of one layer, and how many changed tiles it holds.
struct TileRect {
    uint32_t x0, y0, x1, y1;
    size_t changed;
    size_t area() const { return size_t{x1 - x0} * (y1 - y0); }
};

TileRect bounding(const TileRect& a, const TileRect& b) {
    return {std::min(a.x0, b.x0), std::min(a.y0, b.y0), std::max(a.x1, b.x1), std::max(a.y1, b.y1),
            a.changed + b.changed};
}

bool overlap(const TileRect& a, const TileRect& b) { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1; }

// Runs along rows, joined down columns where the spans agree.
std::vector<TileRect> row_runs(std::span<const uint32_t> layer_tiles, uint32_t tiles_x, uint32_t tiles_y) {
    std::vector<TileRect> done, open;  // open: rects ending at the previous row
    for (uint32_t y = 0; y < tiles_y; ++y) {
        std::vector<TileRect> next;
        for (uint32_t x = 0; x < tiles_x;) {
            if (!layer_tiles[size_t{y} * tiles_x + x]) {
                ++x;
                continue;
            }
            uint32_t end = x;
            while (end < tiles_x && layer_tiles[size_t{y} * tiles_x + end]) ++end;
            auto above = std::find_if(open.begin(), open.end(),
                                      [&](const TileRect& r) { return r.x0 == x && r.x1 == end; });
            if (above != open.end()) {
                next.push_back({x, above->y0, end, y + 1, above->changed + (end - x)});
                open.erase(above);
            } else {
                next.push_back({x, y, end, y + 1, size_t{end - x}});
            }
            x = end;
        }
        done.insert(done.end(), open.begin(), open.end());
        open = std::move(next);
    }
    done.insert(done.end(), open.begin(), open.end());
    return done;
}

// Merges the pair whose bounding box wastes least, while that waste is at most half the
// changed tiles the pair covers and the box overlaps no third rectangle; repeats.
void merge_pairs(std::vector<TileRect>& rects) {
    for (;;) {
        size_t best_a = 0, best_b = 0, best_waste = SIZE_MAX;
        for (size_t a = 0; a < rects.size(); ++a)
            for (size_t b = a + 1; b < rects.size(); ++b) {
                const TileRect box = bounding(rects[a], rects[b]);
                const size_t waste = box.area() - box.changed;
                if (waste >= best_waste || 2 * waste > box.changed) continue;
                bool clear = true;
                for (size_t c = 0; c < rects.size() && clear; ++c) clear = c == a || c == b || !overlap(box, rects[c]);
                if (clear) {
                    best_a = a;
                    best_b = b;
                    best_waste = waste;
                }
            }
        if (best_waste == SIZE_MAX) return;
        rects[best_a] = bounding(rects[best_a], rects[best_b]);
        rects.erase(rects.begin() + std::ptrdiff_t(best_b));
    }
}

// Merges the pair whose box adds fewest unchanged tiles, and every rectangle that box
// overlaps, until at most `max` remain.
void merge_to_at_most(std::vector<TileRect>& rects, uint32_t max) {
    while (rects.size() > max) {
        size_t best_a = 0, best_b = 1, best_waste = SIZE_MAX;
        for (size_t a = 0; a < rects.size(); ++a)
            for (size_t b = a + 1; b < rects.size(); ++b) {
                const TileRect box = bounding(rects[a], rects[b]);
                if (box.area() - box.changed < best_waste) {
                    best_a = a;
                    best_b = b;
                    best_waste = box.area() - box.changed;
                }
            }
        TileRect box = bounding(rects[best_a], rects[best_b]);
        rects.erase(rects.begin() + std::ptrdiff_t(best_b));
        rects.erase(rects.begin() + std::ptrdiff_t(best_a));
        for (bool grew = true; grew;) {  // absorb what the box overlaps, until nothing does
            grew = false;
            for (size_t c = 0; c < rects.size(); ++c)
                if (overlap(box, rects[c])) {
                    box = bounding(box, rects[c]);
                    rects.erase(rects.begin() + std::ptrdiff_t(c));
                    grew = true;
                    break;
                }
        }
        rects.push_back(box);
    }
}

}  // namespace

std::vector<DirtyRegion> merge_changed_tiles(std::span<const uint32_t> changed, const TileGrid& grid,
                                             uint32_t max_regions) {
    if (changed.size() != grid.tile_count())
        throw Error(std::to_string(changed.size()) + " tile flags for a grid of " + std::to_string(grid.tile_count()) +
                    " tiles");
    const uint32_t tiles_x = grid.tiles_x(), tiles_y = grid.tiles_y();
    std::vector<DirtyRegion> regions;
    for (uint32_t layer = 0; layer < grid.layers; ++layer) {
        std::vector<TileRect> rects = row_runs(
            changed.subspan(size_t{layer} * tiles_x * tiles_y, size_t{tiles_x} * tiles_y), tiles_x, tiles_y);
        // The greedy merge looks at every pair: bounded so a frame of scattered changes
        // costs little; such frames are usually replaced whole (the scene-cut rule) anyway.
        if (rects.size() <= 256) merge_pairs(rects);
        if (max_regions == 0) throw Error("max_regions must be at least 1");
        if (rects.size() > max_regions) {
            if (rects.size() > 256) rects = {std::accumulate(rects.begin() + 1, rects.end(), rects.front(), bounding)};
            merge_to_at_most(rects, max_regions);
        }
        std::sort(rects.begin(), rects.end(),
                  [](const TileRect& a, const TileRect& b) { return a.y0 != b.y0 ? a.y0 < b.y0 : a.x0 < b.x0; });
        for (const TileRect& r : rects) {
            const uint32_t x0 = r.x0 * TVLM_CHANGE_TILE, y0 = r.y0 * TVLM_CHANGE_TILE;
            regions.push_back({x0, y0, std::min(grid.width, r.x1 * TVLM_CHANGE_TILE) - x0,
                               std::min(grid.height, r.y1 * TVLM_CHANGE_TILE) - y0, layer, 1});
        }
    }
    return regions;
}

ChangeDetection checked(const ChangeDetection& detection) {
    if (detection.threshold > 255)
        throw Error("a change threshold of " + std::to_string(detection.threshold) +
                    " is above 255, the largest byte difference: give 0 to 255");
    if (!(detection.whole_frame_above >= 0.0 && detection.whole_frame_above <= 1.0))
        throw Error("the scene-cut fraction must lie in [0, 1], not " + std::to_string(detection.whole_frame_above));
    if (detection.max_regions == 0) throw Error("max_regions must be at least 1: each rectangle is one mip update");
    return detection;
}

FrameChanges plan_frame_changes(std::vector<uint32_t> changed, const TileGrid& grid, const ChangeDetection& detection) {
    FrameChanges plan;
    plan.whole_frame = changed.empty();
    if (!plan.whole_frame) {
        plan.tiles_changed = size_t(std::count(changed.begin(), changed.end(), 1u));
        plan.whole_frame = double(plan.tiles_changed) > detection.whole_frame_above * double(grid.tile_count());
        if (!plan.whole_frame) plan.regions = merge_changed_tiles(changed, grid, detection.max_regions);
        plan.changed_tiles = std::move(changed);
    }
    if (plan.whole_frame) plan.regions = {DirtyRegion{0, 0, grid.width, grid.height, 0, grid.layers}};
    size_t copied = 0;
    for (const DirtyRegion& r : plan.regions) copied += size_t{r.width} * r.height * r.layers;
    plan.copied_fraction = double(copied) / (double(grid.width) * grid.height * grid.layers);
    return plan;
}

}  // namespace tvlm
