#pragma once
// What changed between two frames, tile by tile, and the few rectangles that cover it.
// The GPU finds the changed tiles (shaders/frame_changes.comp; reference_changed_tiles()
// is its reference); the host merges them into rectangles (merge_changed_tiles()), which
// are then copied and their mips updated (VideoTexture).
#include <cstdint>
#include <climits>
#include <span>
#include <vector>

#include "engine/mips/box_filter.h"

namespace tvlm {

// Tiles of TVLM_CHANGE_TILE (32) texels a side cover a width x height frame.
struct TileGrid {
    uint32_t width = 0, height = 0, layers = 1;
    uint32_t tiles_x() const;
    uint32_t tiles_y() const;
    size_t tile_count() const { return size_t{tiles_x()} * tiles_y() * layers; }
};

// One word per tile (layer-major, then row-major): 1 where some channel of some texel of
// `after` differs from `before` by more than `threshold`, else 0. Frames are RGBA8, tight
// rows, layer after layer. What the GPU computes.
std::vector<uint32_t> reference_changed_tiles(std::span<const uint8_t> before, std::span<const uint8_t> after,
                                              const TileGrid& grid, uint32_t threshold);

// Rectangles of level-0 texels (one layer each) that together cover every changed tile,
// clipped to the frame: runs of changed tiles along each tile row, runs with the same
// span in consecutive rows joined, then pairs merged greedily where their bounding box
// adds few unchanged tiles (at most half the tiles the two cover); then, while a layer has
// more than `max_regions`, the pair whose box adds fewest unchanged tiles is merged anyway
// (with every rectangle the box overlaps): each rectangle costs a mip update of its own.
// No two overlap. Deterministic.
std::vector<DirtyRegion> merge_changed_tiles(std::span<const uint32_t> changed, const TileGrid& grid,
                                             uint32_t max_regions = UINT32_MAX);

struct ChangeDetection {
    uint32_t threshold = 0;          // bytes: a channel differing by at most this is unchanged
    double whole_frame_above = 0.5;  // a scene cut: more than this fraction of tiles changed
    uint32_t max_regions = 8;        // rectangles per layer at most (merge_changed_tiles)
};
// Throws Error for a threshold above 255, a scene-cut fraction outside [0, 1] or
// max_regions of 0.
ChangeDetection checked(const ChangeDetection& detection);

// What a frame replaces in a texture that follows a video (VideoTexture on Vulkan,
// CudaVideoTexture on CUDA).
struct FrameChanges {
    std::vector<DirtyRegion> regions;     // the rectangles copied and whose mips are updated (whole frames: one)
    bool whole_frame = false;             // the first frame, or a scene cut
    std::vector<uint32_t> changed_tiles;  // per tile as found (empty for the first frame)
    size_t tiles_changed = 0;
    double copied_fraction = 0;  // texels copied over texels of the frame
};
// The plan for a frame whose changed tiles are `changed` (empty: the first frame, replaced
// whole): the whole frame where more than detection.whole_frame_above of the tiles
// changed, else merge_changed_tiles().
FrameChanges plan_frame_changes(std::vector<uint32_t> changed, const TileGrid& grid, const ChangeDetection& detection);

}  // namespace tvlm
