#pragma once
// The `box` mip filter's exact arithmetic, shared by the CPU reference and the tests (the
// GPU shaders and CUDA kernels compute the same integers; see docs/architecture.md, "Mip filters").
//
// Along one axis a level of size s becomes size d = max(1, s >> 1):
//   s == 2d      : destination texel i averages source 2i, 2i+1        (weights 1, 1; sum 2)
//   s == 1       : texel i copies source i                             (weight 1; sum 1)
//   s == 2d + 1  : texel i covers source 2i, 2i+1, 2i+2 by d-i, d, i+1 (exact area, sum s)
// A texel's value is N / D with N = sum of wx * wy * v over its taps and D = the product of
// the two sums, where v is: the byte for rgba8; the 24-bit linear value of the byte for
// rgba8_srgb (shaders/srgb8_tables.h); the stored float for float formats. 8-bit results
// round half up exactly (integers, no float error); float results are N / D in double,
// stored with the format's rounding (within one ulp of the exact average).
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/textures/format.h"

namespace tvlm {

struct BoxTaps {
    uint32_t first = 0;                // source index of the first tap
    uint32_t count = 0;                // 1, 2 or 3
    std::array<uint32_t, 3> weight{};  // integer weights
    uint32_t sum = 0;                  // sum of weights: the axis denominator
};

// Taps of destination texel i for a source axis of size s (destination max(1, s >> 1)).
BoxTaps box_taps(uint32_t i, uint32_t s);

// Destination texels [first, end) whose taps touch source texels [x0, x1) on an axis of size s.
struct IndexRange {
    uint32_t first = 0, end = 0;
};
IndexRange box_dependents(uint32_t x0, uint32_t x1, uint32_t s);

// 24-bit linear value of an sRGB byte, and the byte a box average N / D encodes to.
uint32_t srgb8_linear(uint32_t byte);
uint32_t srgb8_encode(double n, double d);
// The sRGB tables as box shaders read them (shaders/srgb8_buckets.h Srgb8TableWords): 4 x
// the 256 linear values, the carry word of each encode bucket, then the 255 thresholds, in
// whole 16-byte chunks.
std::span<const uint32_t> srgb8_tables();
// rgba8: N / D rounded half up, exactly.
uint32_t unorm8_round(uint64_t n, uint64_t d);

}  // namespace tvlm

namespace tvlm {

// A rectangle of texels [x0, x1) x [y0, y1).
struct TexelRect {
    uint32_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    bool operator==(const TexelRect&) const = default;
};

// A rectangle of level 0, in some layers, whose texels changed.
struct DirtyRegion {
    uint32_t x = 0, y = 0, width = 0, height = 0;
    uint32_t first_layer = 0, layers = 1;
};

// The region as a rectangle, after checking it is not empty and lies inside a texture of
// width x height x layers; throws Error saying which.
TexelRect checked_dirty_rect(const DirtyRegion& region, uint32_t width, uint32_t height, uint32_t layers);

// One dispatch of the single-pass downsampler (shader_params.h BoxMipsParams): levels
// src_level+1 .. src_level+levels from src_level, over tiles [tile_x, tile_x + tiles_x) x
// [tile_y, ...) of TVLM_BOX_TILE texels of level src_level+1.
// How the box kernels average and round `format` (TVLM_BOX_* in shader_params.h).
uint32_t box_kind(Format format);

struct BoxPass {
    uint32_t src_level = 0, levels = 0;
    uint32_t tile_x = 0, tile_y = 0, tiles_x = 0, tiles_y = 0;
};

// The passes that rebuild a chain of `levels` levels of a width x height base after `dirty`
// (a rectangle of level 0) changed: each pass covers the texels that depend on it (whole
// tiles), and chains as many 2:1 levels as one tile can halve.
std::vector<BoxPass> plan_box_passes(uint32_t width, uint32_t height, uint32_t levels, TexelRect dirty);

// A chain's tail: one workgroup (Vulkan) or block (CUDA) writes the chain's last levels
// whole, one after another, each kept in shared memory for the next: level a+1 in an array
// of first_texels, a+2 in one of second_texels, later levels (smaller) alternating.
struct BoxTailLimits {
    uint64_t first_texels = 0, second_texels = 0;
    uint32_t max_levels = 0;
};

// The first of `passes` (plan_box_passes of a chain of `levels` levels over width x height)
// from which the rest run as one tail within `limits`, where that saves passes (an odd
// size's chain takes a pass per level otherwise); passes.size(): no tail.
size_t first_box_tail_pass(uint32_t width, uint32_t height, uint32_t levels, const std::vector<BoxPass>& passes,
                           const BoxTailLimits& limits);

}  // namespace tvlm
