// What the 32-bit word shaders (box_mips_rgba8.comp, box_mips_srgb8.comp) share after their
// average4: one texel is one uint word, and a textureGather reads the 2x2 a texel of the
// next level averages.

// textureGather's order: (x, y+1), (x+1, y+1), (x+1, y), (x, y).
uint gather_average(vec3 at) {
    uvec4 g = textureGather(src, at, 0);
    return average4(g.w, g.z, g.x, g.y);
}

uvec4 texel_of(uint word) { return uvec4(word, 0u, 0u, 0u); }
