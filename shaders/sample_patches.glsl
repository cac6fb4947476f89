// Patch sampling (engine/sampling/patch.h has the rule; engine/sampling/reference_sampling.cpp the definition):
// one invocation per sample, all patches of a batch in one dispatch. Included by
// sample_patches_f32.comp and sample_patches_f16.comp, which choose OUTPUT_T.
#extension GL_GOOGLE_include_directive : require
#include "shader_params.h"
#include "divide.glsl"

layout(local_size_x = TVLM_SAMPLE_GROUP_SIZE) in;

layout(binding = 0) uniform sampler2DArray images;  // trilinear, anisotropic, clamp to edge
layout(binding = 1, std430) readonly buffer Patches { PatchGpu patches[]; };
layout(binding = 2, std430) writeonly buffer Output { OUTPUT_T samples[]; };  // [B, N, C, P, P]

layout(push_constant) uniform Push { PatchSampleParams p; };

void main() {
    // Groups are laid out 2D so that batches beyond 65535 groups fit one dispatch.
    const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    const uint index = group * TVLM_SAMPLE_GROUP_SIZE + gl_LocalInvocationID.x;
    // Divisions by P * P and P through their multipliers (divide.glsl): the integer
    // divisions they replace were most of a sample's instructions.
    const uint per_patch = p.patch_size * p.patch_size;
    const uint n = divide(index, p.per_patch), s = index - n * per_patch;
    if (n >= p.patch_count) return;
    const uint k = divide(s, p.per_row), j = s - k * p.patch_size;
    const PatchGpu rec = patches[n];

    vec4 value = vec4(0.0);  // padding slots stay zero
    if (rec.level >= 0.0) {
        const vec2 size = vec2(p.width, p.height);
        const vec2 axis = vec2(rec.axis_x, rec.axis_y);
        // Pixels along and across the axis, as sample_position() computes them.
        const float a = ((float(j) + 0.5) / float(p.patch_size) - 0.5) * rec.su * p.width;
        const float b = ((float(k) + 0.5) / float(p.patch_size) - 0.5) * rec.sv * p.height;
        const vec2 uv = vec2(rec.cu, rec.cv) + vec2(a * axis.x - b * axis.y, a * axis.y + b * axis.x) / size;
        const vec3 at = vec3(uv, float(rec.layer));
        if (p.gradients != 0u) {
            const float along = rec.su * p.width / float(p.patch_size);
            const float across = rec.sv * p.height / float(p.patch_size);
            value = textureGrad(images, at, along * axis / size, across * vec2(-axis.y, axis.x) / size);
        } else {
            value = textureLod(images, at, rec.level);
        }
    }
    const uint base = n * p.channels * per_patch + s;
    for (uint c = 0u; c < p.channels; ++c) samples[base + c * per_patch] = OUTPUT_T(value[c]);
}
