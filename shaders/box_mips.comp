#version 460
// Up to six levels of the `box` mip filter in one dispatch. A workgroup computes a 32x32
// tile of level a+1 straight from level a (any ratio: 2:1, 1:1 or the exact areas of an
// odd size), keeps the stored values in shared memory and halves them level by level
// (the host only chains levels whose ratio is 2:1), or, as a chain's tail, one workgroup
// writes its last levels at any ratio (tail()). engine/mips/box_filter.h defines the
// arithmetic and engine/mips/reference_mips.cpp is the reference; results are bit-exact for
// 8-bit formats.
#extension GL_GOOGLE_include_directive : require
#include "box_mips_bindings.glsl"

shared uint linear_table[256];
shared uint threshold_table[255];

// Stored values of the level being halved (bytes 0..255 for 8-bit kinds, else floats),
// ping-ponged: level a+1 in tile_a, a+2 in tile_b, a+3 in tile_a, ...
const uint kTile = TVLM_BOX_TILE;
shared vec4 tile_a[kTile * kTile];
shared vec4 tile_b[kTile * kTile / 4];

bool bytes() { return p.kind == TVLM_BOX_UNORM8 || p.kind == TVLM_BOX_SRGB8; }
bool linear_light(uint channel) { return p.kind == TVLM_BOX_SRGB8 && channel < 3u; }

// A stored value as the average works on it: the byte, its 24-bit linear value, the float.
double averaged(float stored, uint channel) {
    return linear_light(channel) ? double(linear_table[uint(stored)]) : double(stored);
}

// #{k : n / d >= threshold[k]}, exactly (thresholds times d are integers below 2^53):
// start from the float encoding of the average, then step past the thresholds it misses.
float encode_srgb(double n, double d) {
    float l = float(n / d) * (1.0 / 16777216.0);
    float e = l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
    uint b = uint(clamp(e * 255.0 + 0.5, 0.0, 255.0));
    while (b < 255u && n >= double(threshold_table[b]) * d) ++b;
    while (b > 0u && n < double(threshold_table[b - 1u]) * d) --b;
    return float(b);
}

#include "round_to_half.glsl"

// n / d rounded half up, exactly (a division may be off by an ulp; the products are exact).
float round_half_up(double n, double d) {
    double q = floor((2.0 * n + d) / (2.0 * d));
    if ((q + 1.0) * 2.0 * d <= 2.0 * n + d) q += 1.0;
    if (q * 2.0 * d > 2.0 * n + d) q -= 1.0;
    return float(q);
}

// The value a level stores for average n / d of one channel.
float stored_value(double n, double d, uint channel) {
    if (linear_light(channel)) return encode_srgb(n, d);
    if (bytes()) return round_half_up(n, d);
    // The same value either way; 2:1 steps skip the double division.
    const float f = positive_zero(float(d == 4.0 ? n * 0.25 : n / d));
    return p.kind == TVLM_BOX_FLOAT16 ? round_to_half(f) : f;
}

// 2:1 fast path for 8-bit texels: sums of four integers, exact in 32 bits.
float halve_bytes(vec4 a, vec4 b, vec4 c, vec4 d, uint channel) {
    if (linear_light(channel)) {
        uint n = linear_table[uint(a[channel])] + linear_table[uint(b[channel])] +
                 linear_table[uint(c[channel])] + linear_table[uint(d[channel])];
        return encode_srgb(double(n), 4.0);
    }
    return floor((a[channel] + b[channel] + c[channel] + d[channel]) * 0.25 + 0.5);
}

// One texel of a 2:1 step from its four sources, rows summed first like the reference.
vec4 halve(vec4 v00, vec4 v10, vec4 v01, vec4 v11) {
    vec4 out_value;
    for (uint c = 0u; c < 4u; ++c) {
        if (bytes()) {
            out_value[c] = halve_bytes(v00, v10, v01, v11, c);
        } else {
            uint kinds = non_finite_kind(v00[c]) | non_finite_kind(v10[c]) | non_finite_kind(v01[c]) |
                         non_finite_kind(v11[c]);
            double n = (double(v00[c]) + double(v10[c])) + (double(v01[c]) + double(v11[c]));
            out_value[c] = kinds != 0u ? non_finite_average(kinds) : stored_value(n, 4.0, c);
        }
    }
    return out_value;
}

// Taps along one axis (box_filter.h box_taps): first index, count, weights, their sum.
struct Taps { uint first; uint count; uvec3 weight; uint sum; };
Taps taps(uint i, uint s) {
    if (s == 1u) return Taps(i, 1u, uvec3(1u, 0u, 0u), 1u);
    if (s % 2u == 0u) return Taps(2u * i, 2u, uvec3(1u, 1u, 0u), 2u);
    uint d = s / 2u;
    return Taps(2u * i, 3u, uvec3(d - i, d, i + 1u), s);
}

// UNORM8 sums in float where float holds them exactly (TVLM_BOX_FLOAT_EXACT_WEIGHTS, as
// cuda/mips/box_mips.cu does). floor((2n + d) / 2d), the half-up rounding, is then a float
// quotient and one exact step either way. Double conversions and divisions made the odd
// levels of video's frame sizes (1080 = 135 x 8) slow.
vec4 bytes_half_up(vec4 n, float d) {
    vec4 twice = 2.0 * n + d;
    float step = 2.0 * d;
    vec4 q = floor(twice / step);
    return q + vec4(lessThanEqual((q + 1.0) * step, twice)) - vec4(greaterThan(q * step, twice));
}

// Where a texel's taps are read: level a through the sampler, or (the tail, below) a level
// kept in shared memory as rows of `width` stored values.
const uint kFromImage = 0u, kFromTileA = 1u, kFromTileB = 2u;
vec4 load_stored(uint from, uint width, uint x, uint y, uint layer) {
    if (from == kFromTileA) return tile_a[y * width + x];
    if (from == kFromTileB) return tile_b[y * width + x];
    vec4 v = texelFetch(src, ivec3(x, y, layer), 0);
    return bytes() ? round(v * 255.0) : v;
}

// Texel (x, y) of the level after a src_w x src_h level read from `from`: any ratio, exact areas.
vec4 box_texel(uint from, uint src_w, uint src_h, uint x, uint y, uint layer) {
    Taps tx = taps(x, src_w), ty = taps(y, src_h);
    if (tx.count == 2u && ty.count == 2u) {
        return halve(load_stored(from, src_w, tx.first, ty.first, layer), load_stored(from, src_w, tx.first + 1u, ty.first, layer),
                     load_stored(from, src_w, tx.first, ty.first + 1u, layer),
                     load_stored(from, src_w, tx.first + 1u, ty.first + 1u, layer));
    }
    if (p.kind == TVLM_BOX_UNORM8 && tx.sum * ty.sum <= TVLM_BOX_FLOAT_EXACT_WEIGHTS) {
        // Exact float sums (bytes_half_up): all nine taps read at once, clamped to the
        // level; a tap past the count has weight 0 (box_filter.h's taps).
        vec4 n = vec4(0.0);
        for (uint b = 0u; b < 3u; ++b) {
            vec4 row = vec4(0.0);
            for (uint a = 0u; a < 3u; ++a)
                row += float(tx.weight[a]) * load_stored(from, src_w, min(tx.first + a, src_w - 1u),
                                                         min(ty.first + b, src_h - 1u), layer);
            n += float(ty.weight[b]) * row;
        }
        return bytes_half_up(n, float(tx.sum * ty.sum));
    }
    dvec4 n = dvec4(0.0);
    uvec4 kinds = uvec4(0u);
    for (uint b = 0u; b < ty.count; ++b) {
        dvec4 row = dvec4(0.0);
        for (uint a = 0u; a < tx.count; ++a) {
            vec4 v = load_stored(from, src_w, tx.first + a, ty.first + b, layer);
            for (uint c = 0u; c < 4u; ++c) {
                row[c] += double(tx.weight[a]) * averaged(v[c], c);
                kinds[c] |= non_finite_kind(v[c]);
            }
        }
        n += double(ty.weight[b]) * row;
    }
    double d = double(tx.sum) * double(ty.sum);
    vec4 out_value;
    for (uint c = 0u; c < 4u; ++c) out_value[c] = kinds[c] != 0u ? non_finite_average(kinds[c]) : stored_value(n[c], d, c);
    return out_value;
}

vec4 first_level_texel(uint x, uint y, uint layer) { return box_texel(kFromImage, p.src_width, p.src_height, x, y, layer); }

void store(uint step, ivec3 at, vec4 stored) { store_level(step, at, bytes() ? stored / 255.0 : stored); }

// The tail of a chain (p.tail): one workgroup writes every level a+1 .. a+levels, each at
// its own ratio, keeping each level whole in shared memory for the next (level a+1 at most
// kTile^2 texels in tile_a, a+2 at most a quarter of that in tile_b; the host checks).
// Odd sizes otherwise take a dispatch and a barrier per level.
void tail(uint layer) {
    uint t = gl_LocalInvocationIndex;
    uvec2 size = uvec2(max(1u, p.src_width >> 1), max(1u, p.src_height >> 1));
    for (uint i = t; i < size.x * size.y; i += TVLM_BOX_THREADS) {
        uvec2 at = uvec2(i % size.x, i / size.x);
        vec4 v = first_level_texel(at.x, at.y, layer);
        store(1u, ivec3(at, layer), v);
        tile_a[i] = v;
    }
    for (uint step = 2u; step <= p.levels; ++step) {
        barrier();
        uvec2 next = max(uvec2(1u), size >> 1);
        bool from_a = step % 2u == 0u;
        for (uint i = t; i < next.x * next.y; i += TVLM_BOX_THREADS) {
            uvec2 at = uvec2(i % next.x, i / next.x);
            vec4 v = box_texel(from_a ? kFromTileA : kFromTileB, size.x, size.y, at.x, at.y, layer);
            store(step, ivec3(at, layer), v);
            if (from_a) tile_b[i] = v; else tile_a[i] = v;
        }
        size = next;
    }
}

void main() {
    uint t = gl_LocalInvocationIndex;
    if (p.kind == TVLM_BOX_SRGB8) {
        linear_table[t] = srgb_tables[t] >> 2;  // the buffer holds 4 x each
        if (t < 255u) threshold_table[t] = srgb_tables[TVLM_SRGB8_THRESHOLD_WORD + t];
    }
    barrier();
    uint layer = gl_WorkGroupID.z + p.first_layer;
    if (p.tail != 0u) {
        tail(layer);
        return;
    }
    uvec2 tile = gl_WorkGroupID.xy + uvec2(p.tile_x, p.tile_y);
    uvec2 size = uvec2(max(1u, p.src_width >> 1), max(1u, p.src_height >> 1));  // level a+1

    // Level a+1: four texels per invocation, a warp along a row (coalesced source rows).
    for (uint r = 0u; r < kTile * kTile / TVLM_BOX_THREADS; ++r) {
        uvec2 local = uvec2(t % kTile, t / kTile + r * (TVLM_BOX_THREADS / kTile));
        uvec2 at = tile * kTile + local;
        vec4 v = vec4(0.0);
        if (all(lessThan(at, size))) {
            v = first_level_texel(at.x, at.y, layer);
            store(1u, ivec3(at, layer), v);
        }
        tile_a[local.y * kTile + local.x] = v;
    }

    // Levels a+2 .. a+levels: exact 2:1 steps inside the tile.
    uint edge = kTile;  // texels per tile row of the level being halved
    for (uint step = 2u; step <= p.levels; ++step) {
        barrier();
        size >>= 1;
        uint half_edge = edge / 2u;
        if (t < half_edge * half_edge) {
            uvec2 local = uvec2(t % half_edge, t / half_edge);
            uvec2 at = tile * half_edge + local;
            uint i = 2u * local.y * edge + 2u * local.x;
            bool from_a = step % 2u == 0u;
            vec4 v00 = from_a ? tile_a[i] : tile_b[i], v10 = from_a ? tile_a[i + 1u] : tile_b[i + 1u];
            vec4 v01 = from_a ? tile_a[i + edge] : tile_b[i + edge];
            vec4 v11 = from_a ? tile_a[i + edge + 1u] : tile_b[i + edge + 1u];
            vec4 v = halve(v00, v10, v01, v11);
            if (all(lessThan(at, size))) store(step, ivec3(at, layer), v);
            if (from_a) tile_b[local.y * half_edge + local.x] = v; else tile_a[local.y * half_edge + local.x] = v;
        }
        edge = half_edge;
    }
}
