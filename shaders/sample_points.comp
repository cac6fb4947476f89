#version 460
// The point-sampling job of the benchmarks (point_samples.h) on Vulkan compute: one
// invocation per sample, textureLod through the patch samplers' trilinear sampler, a vec4
// per sample in sample order (cuda/sampling/texture_reads.cu sample_points is the CUDA twin).
#extension GL_GOOGLE_include_directive : require
#include "point_samples.h"

layout(local_size_x = TVLM_POINT_GROUP_SIZE) in;

layout(binding = 0) uniform sampler2DArray image;  // layer 0 is sampled
layout(binding = 1, std430) writeonly buffer Output { vec4 samples[]; };

layout(push_constant) uniform Push { PointSampleParams p; };

void main() {
    // Groups are laid out 2D so that counts beyond 65535 groups fit one dispatch.
    const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    const uint i = group * TVLM_POINT_GROUP_SIZE + gl_LocalInvocationID.x;
    if (i >= p.count) return;
    const PointSample q = point_sample(p, i);
    samples[i] = textureLod(image, vec3(q.u, q.v, 0.0), q.lod);
}
