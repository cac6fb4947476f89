// What both box shaders share (box_mips.comp, box_mips_rgba8.comp): one pipeline layout.
#include "shader_params.h"
#include "srgb8_tables.h"

layout(local_size_x = TVLM_BOX_THREADS) in;

// Level a through a view that returns stored values: sRGB through its UNORM view.
layout(binding = 0) uniform sampler2DArray src;
layout(binding = 1) writeonly uniform image2DArray dst1;  // level a+1
layout(binding = 2) writeonly uniform image2DArray dst2;
layout(binding = 3) writeonly uniform image2DArray dst3;
layout(binding = 4) writeonly uniform image2DArray dst4;
layout(binding = 5) writeonly uniform image2DArray dst5;
layout(binding = 6) writeonly uniform image2DArray dst6;  // level a+6

layout(push_constant) uniform Push { BoxMipsParams p; };

// srgb8_tables.h as one buffer: 4 x the 256 linear values, the carry words that
// box_mips_srgb8.comp reads, then the 255 thresholds. (Constant arrays in the shader made
// lavapipe spend seconds compiling each variant.)
layout(binding = 7, std430) readonly buffer SrgbTables { uint srgb_tables[TVLM_SRGB8_THRESHOLD_WORD + 255]; };

// Writes level a+step (a value as imageStore takes it).
void store_level(uint step, ivec3 at, vec4 v) {
    switch (step) {
        case 1u: imageStore(dst1, at, v); break;
        case 2u: imageStore(dst2, at, v); break;
        case 3u: imageStore(dst3, at, v); break;
        case 4u: imageStore(dst4, at, v); break;
        case 5u: imageStore(dst5, at, v); break;
        default: imageStore(dst6, at, v); break;
    }
}
