#pragma once
// The backward kernel for float channels in groups of 4 (more than 4 channels): a lane a
// group, the coarsest levels summed in a copy per point slot.
#include "cuda/min_blocks.cuh"
#include "cuda/differentiable/point_backward_pass.cuh"

namespace tvlm::point_kernels {

// Where the groups kernel sums levels in shared memory: the coarsest (elements
// [slot_first, slot_first + slot_values)) in a copy per point slot of the block, the next
// finer ones ([block_first, slot_first)) in one copy per block, with shared atomics.
struct SharedSums {
    size_t block_first, slot_first;
    uint32_t slot_values;
    __host__ __device__ uint32_t block_values() const { return uint32_t(slot_first - block_first); }
};

// Float channels in groups of 4 (4 | channels, more than 4, 16-byte aligned buffers): a
// point's lanes take a group each (lanes_for gives a point a lane a group, up to 128
// channels). A block's threads serve kBlock / lanes points at a time, each from a slot of
// lanes; the coarsest levels have a copy per slot, so a slot's lanes (distinct channels)
// add to it with plain loads and stores: no atomics, no lanes waiting on each other. The
// next levels share the block's copy with shared atomics (compare-and-swap loops: their
// more texels keep retries rare), or go to global atomics (groups_shared_sums). With only
// the block's copy, a third of the backward went to the compare-and-swap loops; a copy per
// warp for the 1x1..4x4 levels was faster, a copy per slot faster still, and the 8x8 level
// on global atomics fastest (docs/benchmarks.md, dropped experiments). One kernel for both passes (with
// and without texel gradients), so that d/d uv and d/d lod are the same arithmetic, bit
// for bit, whether the image takes a gradient or not.
__global__ void __launch_bounds__(kBlock, TVLM_MIN_BLOCKS(kBlock, 3))
    backward_groups_kernel(const __grid_constant__ Shape<float> shape, ChainLevels<const float> chain,
                           PointBatch<float> points, const float* grad_out, ChainLevels<float> grad, float* grad_uv,
                           float* grad_lod, BackwardPass pass, SharedSums shared, uint32_t* nonfinite) {
    extern __shared__ unsigned char shared_bytes[];
    float* sums = reinterpret_cast<float*>(shared_bytes);  // the slots' copies, then the block's
    const uint32_t slots = blockDim.x >> shape.lane_bits, slot = threadIdx.x >> shape.lane_bits;
    const uint32_t block_values = shared.block_values(), all_values = slots * shared.slot_values + block_values;
    for (uint32_t k = threadIdx.x; k < all_values; k += blockDim.x) sums[k] = 0;
    __shared__ Level levels[kMaxLevels];
    copy_levels(shape, levels);  // its barrier covers the sums' zeros too
    float* slot_sums = sums + slot * shared.slot_values;
    float* block_sums = sums + slots * shared.slot_values;
    const uint32_t channels = shape.channels, lane = threadIdx.x & (shape.lanes - 1), c = 4 * lane;
    const bool has_group = c < channels;
    const size_t step = size_t(gridDim.x) * slots;
    // The loop's bound is the same for every lane of a warp (points are whole lane groups
    // of one warp): all reach the shuffles.
    for (size_t first = size_t(blockIdx.x) * slots; first < points.count; first += step) {
        const size_t i = first + slot;
        const bool real = i < points.count;
        const auto [u, v, p, layer, go] = read_point(shape, points, grad_out, i, channels, c, has_group,
                                                     pass.point_grads, nonfinite);
        float gu = 0, gv = 0, gl = 0;
        for (uint32_t k = 0; k < 2; ++k) {
            const uint32_t l = p.base + k;
            const bool present = real && has_group && (k == 0 || p.has_next);
            if (!present) continue;
            const bool scatter = l >= pass.first && l < pass.end;
            const Level& level = levels[l];
            const float weight = k == 0 ? 1 - p.blend : p.blend;
            const float4 gw = go * weight;
            const Bilinear<float> s = bilinear_at(level, u, v);
            // The texels for d/d uv and d/d lod read before the scatter, which hides their latency.
            Quad<float4> q{};
            if (pass.point_grads) q = quad_group_at(level_base(shape, levels, chain, l), level, layer, s, c);
            if (scatter && nonzero(gw)) {
                // Whole levels are summed in the slots' copies, the block's, or neither.
                const bool in_slot = level.offset >= shared.slot_first,
                           in_block = !in_slot && level.offset >= shared.block_first;
                const auto tap = s.taps();
                const size_t level_first = level.offset + size_t(layer) * level.layer_stride +
                                           size_t(c) * level.channel;
                float* g = level_base(shape, levels, grad, l) + size_t(layer) * level.layer_stride;
#pragma unroll
                for (uint32_t j = 0; j < 4; ++j) {
                    const float4 value = gw * tap.weight[j];
                    const size_t element = level_first + tap.texel[j] * level.texel;
                    if (in_slot) {
                        float* at = slot_sums + (element - shared.slot_first);
                        at[0] += value.x;
                        at[level.channel] += value.y;
                        at[2 * level.channel] += value.z;
                        at[3 * level.channel] += value.w;
                    } else if (in_block) {
                        float* at = block_sums + (element - shared.block_first);
                        atomicAdd(at, value.x);
                        atomicAdd(at + level.channel, value.y);
                        atomicAdd(at + 2 * level.channel, value.z);
                        atomicAdd(at + 3 * level.channel, value.w);
                    } else {
                        add_group(g, level, tap.texel[j], value, c);
                    }
                }
            }
            if (!pass.point_grads) continue;
            gu += s.width * dot4(gw, (q.t10 - q.t00) * (1 - s.b) + (q.t11 - q.t01) * s.b);
            gv += s.height * dot4(gw, (q.t01 - q.t00) * (1 - s.a) + (q.t11 - q.t10) * s.a);
            if (p.free) gl += (k == 0 ? -1.f : 1.f) * dot4(go, blend_quad4(q, s));
        }
        if (!pass.point_grads) continue;                                    // the same for the whole grid
        for (uint32_t offset = shape.lanes / 2; offset > 0; offset /= 2) {  // the point's lanes' sums
            gu += __shfl_xor_sync(0xffffffffu, gu, offset);
            gv += __shfl_xor_sync(0xffffffffu, gv, offset);
            gl += __shfl_xor_sync(0xffffffffu, gl, offset);
        }
        if (real && lane == 0) store_point_grads(grad_uv, grad_lod, i, gu, gv, gl);
    }
    __syncthreads();
    for (uint32_t k = threadIdx.x; k < block_values + shared.slot_values; k += blockDim.x) {
        float sum = 0;
        if (k < block_values) sum = block_sums[k];
        else
            for (uint32_t w = 0; w < slots; ++w) sum += sums[w * shared.slot_values + (k - block_values)];
        if (sum != 0.f) atomicAdd(chain_element(shape, grad, shared.block_first + k), sum);
    }
}

}  // namespace tvlm::point_kernels
