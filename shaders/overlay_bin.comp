#version 460
// Binning of overlay shapes into screen tiles, a workgroup per shape whose invocations
// share its tiles (a large shape's hundreds of tiles in parallel), in two modes:
// 0 counts each tile's shapes (atomics on the counts), 1 writes each shape's index into
// the list of every tile its bounds touch (at the tile's offset, from overlay_scan.comp,
// plus a slot from an atomic cursor). Slots come in any order; overlay_shade.comp sorts.
// Tiles where a shape draws nothing (inside an outlined box, away from a line) are left
// out (overlay_tile_empty).
#extension GL_GOOGLE_include_directive : require
#include "overlay_shapes.h"

layout(local_size_x = TVLM_OVERLAY_THREADS) in;

layout(binding = 0, std430) readonly buffer Shapes { OverlayShape shapes[]; };
layout(binding = 1, std430) buffer Counts { uint counts[]; };    // per tile (mode 0)
layout(binding = 2, std430) readonly buffer Offsets { uint offsets[]; };  // per tile, + total
layout(binding = 3, std430) buffer Cursors { uint cursors[]; };  // per tile (mode 1), zeroed
layout(binding = 4, std430) writeonly buffer Lists { uint lists[]; };
layout(push_constant) uniform Push { OverlayParams p; };

void main() {
    const uint i = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (i >= p.shape_count) return;
    const OverlayShape s = shapes[i];
    // Tiles whose pixels the bounds touch (the host clipped the bounds to the frame).
    const int tx0 = overlay_tile_of(s.min_x), ty0 = overlay_tile_of(s.min_y);
    const uint across = uint(overlay_tile_of(s.max_x) - tx0 + 1);
    const uint count = across * uint(overlay_tile_of(s.max_y) - ty0 + 1);
    for (uint k = gl_LocalInvocationIndex; k < count; k += TVLM_OVERLAY_THREADS) {
        const uint tx = uint(tx0) + k % across, ty = uint(ty0) + k / across;
        if (overlay_tile_empty(s, tx, ty)) continue;
        const uint tile = ty * p.tiles_x + tx;
        if (p.mode == 0u) atomicAdd(counts[tile], 1u);
        else lists[offsets[tile] + atomicAdd(cursors[tile], 1u)] = i;
    }
}
