#version 460
// Which tiles of a new RGBA8 frame differ from level 0 of the texture (the frame it holds):
// one workgroup per tile and layer, each invocation comparing four texels byte by byte.
// engine/video/changed_tiles.cpp reference_changed_tiles() is the reference.
#extension GL_GOOGLE_include_directive : require
#include "shader_params.h"

layout(local_size_x = TVLM_CHANGE_THREADS) in;

// Level 0 through its UNORM view (sRGB textures too: the bytes as stored), texelFetch.
layout(binding = 0) uniform sampler2DArray previous;
// The new frame: RGBA8 texels as words, tight rows, layer after layer.
layout(binding = 1, std430) readonly buffer Frame { uint texels[]; } frame;
// One word per tile, layer-major, then row-major: 1 changed, 0 not.
layout(binding = 2, std430) writeonly buffer Changed { uint tiles[]; } changed;
layout(push_constant) uniform Push { FrameChangeParams p; };

shared uint tile_changed;

bool differs(uint before, uint after) {
    for (uint shift = 0u; shift < 32u; shift += 8u) {
        int d = int((before >> shift) & 0xffu) - int((after >> shift) & 0xffu);
        if (uint(abs(d)) > p.threshold) return true;
    }
    return false;
}

void main() {
    const uint t = gl_LocalInvocationIndex, layer = gl_WorkGroupID.z;
    const uvec2 tile = gl_WorkGroupID.xy;
    if (t == 0u) tile_changed = 0u;
    barrier();
    bool any = false;
    // A warp reads along a row: coalesced frame words.
    for (uint i = t; i < TVLM_CHANGE_TILE * TVLM_CHANGE_TILE; i += TVLM_CHANGE_THREADS) {
        const uvec2 at = tile * TVLM_CHANGE_TILE + uvec2(i % TVLM_CHANGE_TILE, i / TVLM_CHANGE_TILE);
        if (at.x >= p.width || at.y >= p.height) continue;
        // UNORM8 -> float is c / 255 correctly rounded, so rounding back gives the byte.
        const uvec4 bytes = uvec4(round(texelFetch(previous, ivec3(at, layer), 0) * 255.0));
        const uint before = bytes.x | (bytes.y << 8) | (bytes.z << 16) | (bytes.w << 24);
        any = any || differs(before, frame.texels[(layer * p.height + at.y) * p.width + at.x]);
    }
    if (any) atomicOr(tile_changed, 1u);
    barrier();
    if (t == 0u) changed.tiles[(layer * p.tiles_y + tile.y) * p.tiles_x + tile.x] = tile_changed;
}
