// The body of overlay_shade.comp (RGBA8 frames, one r32ui word per texel) and
// overlay_shade_rgba16f.comp (RGBA16F frames, TVLM_OVERLAY_F16: two words per texel, four
// halves, blended as stored: linear light).
// Composites a tile's shapes over its pixels, one workgroup per tile, one invocation per
// pixel. The tile's list (overlay_bin.comp, slots in any order) is sorted by shape index in
// shared memory, so shapes composite in scene order; a list longer than TVLM_OVERLAY_SORTED
// is replaced by a walk over every shape in order, testing its bounds against the tile.
// Pixels no shape covers are left as they are.
#include "overlay_shapes.h"

layout(local_size_x = TVLM_OVERLAY_TILE, local_size_y = TVLM_OVERLAY_TILE) in;

layout(binding = 0, std430) readonly buffer Shapes { OverlayShape shapes[]; };
layout(binding = 1, std430) readonly buffer Counts { uint counts[]; };
layout(binding = 2, std430) readonly buffer Offsets { uint offsets[]; };
layout(binding = 3, std430) readonly buffer Lists { uint lists[]; };
#ifdef TVLM_OVERLAY_F16
layout(binding = 4, rg32ui) uniform uimage2DArray frame;
#else
layout(binding = 4, r32ui) uniform uimage2DArray frame;
#endif
layout(binding = 5, std430) readonly buffer Atlas { uint atlas_words[]; };  // the label font's SDF bytes
layout(push_constant) uniform Push { OverlayParams p; };

float atlas_texel(uint x, uint y) {
    const uint i = y * p.atlas_width + x;
    return float((atlas_words[i >> 2u] >> (8u * (i & 3u))) & 0xffu);
}

OverlayCoverage coverage_of(OverlayShape s, float px, float py) {
    OverlayCoverage c = overlay_shape_coverage(s, px, py);
    if (s.kind == TVLM_SHAPE_GLYPH) {
        const OverlayAtlasTaps a = overlay_glyph_taps(s, px, py);
        c.stroke = overlay_glyph_coverage_of(s, a, atlas_texel(a.x, a.y), atlas_texel(a.x + 1u, a.y),
                                             atlas_texel(a.x, a.y + 1u), atlas_texel(a.x + 1u, a.y + 1u));
    }
    return c;
}

shared uint sorted[TVLM_OVERLAY_SORTED];

void main() {
    const uint tile = gl_WorkGroupID.y * p.tiles_x + gl_WorkGroupID.x, t = gl_LocalInvocationIndex;
    const uint n = counts[tile];
    if (n == 0u) return;
    const uvec2 pixel = gl_WorkGroupID.xy * TVLM_OVERLAY_TILE + gl_LocalInvocationID.xy;
    const bool inside = pixel.x < p.width && pixel.y < p.height;
    const float px = float(pixel.x) + 0.5, py = float(pixel.y) + 0.5;
    OverlayPixel dst;
    bool touched = false;
    if (inside) {
#ifdef TVLM_OVERLAY_F16
        const uvec2 words = imageLoad(frame, ivec3(pixel, 0)).xy;
        const vec2 rg = unpackHalf2x16(words.x), ba = unpackHalf2x16(words.y);
        dst.r = rg.x;
        dst.g = rg.y;
        dst.b = ba.x;
        dst.a = ba.y;
#else
        dst = overlay_load(imageLoad(frame, ivec3(pixel, 0)).x, p.srgb);
#endif
    }
    if (n <= TVLM_OVERLAY_SORTED) {
        // Bitonic sort of the list, padded to a power of two with ~0u (sorts last).
        uint size = 1u;
        while (size < n) size <<= 1u;
        for (uint i = t; i < size; i += TVLM_OVERLAY_THREADS) sorted[i] = i < n ? lists[offsets[tile] + i] : ~0u;
        barrier();
        for (uint k = 2u; k <= size; k <<= 1u)
            for (uint j = k >> 1u; j > 0u; j >>= 1u) {
                for (uint i = t; i < size; i += TVLM_OVERLAY_THREADS) {
                    const uint partner = i ^ j;
                    if (partner > i) {
                        const bool ascending = (i & k) == 0u;
                        const uint a = sorted[i], b = sorted[partner];
                        if ((a > b) == ascending) {
                            sorted[i] = b;
                            sorted[partner] = a;
                        }
                    }
                }
                barrier();
            }
        if (!inside) return;
        for (uint i = 0u; i < n; ++i) {
            const OverlayShape s = shapes[sorted[i]];
            if (!overlay_touches(s, float(pixel.x), float(pixel.y), float(pixel.x) + 1.0, float(pixel.y) + 1.0)) continue;
            const OverlayCoverage c = coverage_of(s, px, py);
            if (c.fill > 0.0 || c.stroke > 0.0) {
                dst = overlay_over(dst, s, c, p.srgb);
                touched = true;
            }
        }
    } else {
        if (!inside) return;
        for (uint i = 0u; i < p.shape_count; ++i) {
            const OverlayShape s = shapes[i];
            if (!overlay_touches(s, float(pixel.x), float(pixel.y), float(pixel.x) + 1.0, float(pixel.y) + 1.0)) continue;
            const OverlayCoverage c = coverage_of(s, px, py);
            if (c.fill > 0.0 || c.stroke > 0.0) {
                dst = overlay_over(dst, s, c, p.srgb);
                touched = true;
            }
        }
    }
    if (!touched) return;
#ifdef TVLM_OVERLAY_F16
    imageStore(frame, ivec3(pixel, 0), uvec4(packHalf2x16(vec2(dst.r, dst.g)), packHalf2x16(vec2(dst.b, dst.a)), 0u, 0u));
#else
    imageStore(frame, ivec3(pixel, 0), uvec4(overlay_store(dst, p.srgb), 0u, 0u, 0u));
#endif
}
