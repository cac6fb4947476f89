#version 460
// Each point's nearest other points by brute force (engine/overlay/vulkan_knn.h): an
// invocation per point walks every point through shared-memory tiles, keeping its
// `neighbours` nearest sorted by (squared distance, index): ties go to the lower index,
// as nearest_neighbours() on the CPU. Distances are float (the CPU's are double: equal
// wherever float computes them exactly, e.g. coordinates on a 1/8-pixel grid).
#extension GL_GOOGLE_include_directive : require
#include "shader_params.h"

layout(local_size_x = TVLM_KNN_THREADS) in;

layout(binding = 0, std430) readonly buffer Points { vec2 points[]; };
layout(binding = 1, std430) writeonly buffer Nearest { uint nearest[]; };  // [count][neighbours]
layout(push_constant) uniform Push { KnnParams p; };

shared vec2 tile[TVLM_KNN_THREADS];

void main() {
    const uint i = gl_WorkGroupID.x * TVLM_KNN_THREADS + gl_LocalInvocationIndex;
    const bool live = i < p.count;
    const vec2 me = live ? points[i] : vec2(0.0);
    float best_d[TVLM_KNN_MAX];
    uint best_i[TVLM_KNN_MAX];
    for (uint r = 0u; r < TVLM_KNN_MAX; ++r) {
        best_d[r] = uintBitsToFloat(0x7f800000u);  // +inf
        best_i[r] = ~0u;
    }
    const uint m = p.neighbours;
    for (uint base = 0u; base < p.count; base += TVLM_KNN_THREADS) {
        barrier();
        const uint load = base + gl_LocalInvocationIndex;
        if (load < p.count) tile[gl_LocalInvocationIndex] = points[load];
        barrier();
        if (!live) continue;
        const uint n = min(TVLM_KNN_THREADS, p.count - base);
        for (uint t = 0u; t < n; ++t) {
            const uint j = base + t;
            if (j == i) continue;
            const vec2 d = tile[t] - me;
            precise const float d2 = d.x * d.x + d.y * d.y;  // no fused multiply-add: as the CPU rounds
            if (!(d2 < best_d[m - 1u])) continue;  // equal: the earlier (lower) index stays ahead
            uint at = m - 1u;
            while (at > 0u && best_d[at - 1u] > d2) {
                best_d[at] = best_d[at - 1u];
                best_i[at] = best_i[at - 1u];
                --at;
            }
            best_d[at] = d2;
            best_i[at] = j;
        }
    }
    if (!live) return;
    for (uint r = 0u; r < m; ++r) nearest[i * m + r] = best_i[r];
}
