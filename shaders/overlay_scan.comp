#version 460
// Exclusive prefix sum of the tiles' shape counts into their list offsets (offsets[tiles]
// is the total), in one workgroup: each invocation sums a contiguous run of tiles, the
// runs' sums are scanned in shared memory, then each invocation writes its run.
#extension GL_GOOGLE_include_directive : require
#include "overlay_shapes.h"

layout(local_size_x = TVLM_OVERLAY_THREADS) in;

layout(binding = 0, std430) readonly buffer Counts { uint counts[]; };
layout(binding = 1, std430) writeonly buffer Offsets { uint offsets[]; };
layout(push_constant) uniform Push { OverlayParams p; };

shared uint run_sums[TVLM_OVERLAY_THREADS];

void main() {
    const uint t = gl_LocalInvocationIndex, tiles = p.tiles_x * p.tiles_y;
    const uint per = (tiles + TVLM_OVERLAY_THREADS - 1u) / TVLM_OVERLAY_THREADS;
    const uint first = min(t * per, tiles), end = min(first + per, tiles);
    uint sum = 0u;
    for (uint i = first; i < end; ++i) sum += counts[i];
    run_sums[t] = sum;
    barrier();
    // Hillis-Steele inclusive scan of the runs' sums.
    for (uint stride = 1u; stride < TVLM_OVERLAY_THREADS; stride <<= 1u) {
        const uint add = t >= stride ? run_sums[t - stride] : 0u;
        barrier();
        run_sums[t] += add;
        barrier();
    }
    uint offset = run_sums[t] - sum;
    for (uint i = first; i < end; ++i) {
        offsets[i] = offset;
        offset += counts[i];
    }
    if (t == TVLM_OVERLAY_THREADS - 1u) offsets[tiles] = run_sums[t];
}
