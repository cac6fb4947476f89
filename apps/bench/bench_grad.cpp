// tvlm bench grad: differentiable sampling on CUDA (cuda/differentiable/point_sampling_grad.h), GPU time of
// each step of a training step and of the whole, next to its floor. The jobs: 1M trilinear
// samples at per-sample LOD from a 4096^2 RGBA float32 texture and from a 40-channel 1024^2
// one, and 273 foveated 16x16 patches per image from one and from 32 RGBA 1024^2 images.
// PyTorch's way of the same jobs is timed in the same run by `python -m texturevlm.bench grad`.
#include <cmath>
#include <cstdio>
#include <utility>
#include <string>
#include <tuple>
#include <vector>

#include "apps/bench/atomic_ceiling.h"
#include "apps/bench/bench_gpu.h"
#include "apps/bench/bench_timing.h"
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "engine/mips/mip_filter.h"
#include "engine/sampling/patch.h"
#include "engine/sampling/patch_layouts.h"
#include "cuda/nonfinite_flag.h"
#include "cuda/differentiable/point_sampling_grad.h"

namespace tvlm {

namespace {

// Points on the host: u, v interleaved, lod, layer.
struct HostPoints {
    std::vector<float> uv, lod;
    std::vector<int32_t> layer;
    void add(double u, double v, double level, uint32_t in_layer) {
        uv.push_back(float(u));
        uv.push_back(float(v));
        lod.push_back(float(level));
        layer.push_back(int32_t(in_layer));
    }
};

HostPoints random_points(size_t count, uint32_t size) {
    HostPoints points;
    uint32_t h = 12345;
    const auto next = [&] {
        h = h * 1664525u + 1013904223u;
        return double(h >> 8) * (1.0 / 16777216.0);
    };
    const double top = double(full_mip_count(size, size) - 1);
    for (size_t i = 0; i < count; ++i) {
        const double u = next(), v = next();
        points.add(u, v, next() * top, 0);
    }
    return points;
}

// Every sample of every real patch of `layout` (trilinear at the patch's level).
HostPoints patch_points(const PatchLayout& layout) {
    HostPoints points;
    const uint32_t p = layout.patch_size;
    for (const Patch& patch : layout.patches) {
        if (patch.level < 0) continue;
        for (uint32_t k = 0; k < p; ++k)
            for (uint32_t j = 0; j < p; ++j) {
                const SamplePosition s = sample_position(patch, j, k, p, layout.width, layout.height);
                points.add(s.u, s.v, patch.level, patch.layer);
            }
    }
    return points;
}

// The float4 atomics the backward issues to levels of at least 64x64 texels, as float4
// indices into the gradient's level 0 and into its coarse levels: the points' taps as the
// kernels find them (float, clamp to edge, no atomics of zero weight). Level 0 channels
// last and 4 | channels only. A subset: on smaller levels the kernels sum some levels in
// shared memory first (which ones depends on the kernel and the channel count) and send
// the rest to global atomics, so the row is a lower bound on the scatter's time.
struct AtomicTargets {
    std::vector<uint32_t> level0, coarse;
};
AtomicTargets texel_atomic_targets(const FeatureChainShape& shape, const HostPoints& host) {
    AtomicTargets targets;
    const uint32_t groups = shape.channels / 4;
    const float top = float(shape.levels - 1);
    for (size_t i = 0; i < host.lod.size(); ++i) {
        const float clamped = std::fmin(std::fmax(host.lod[i], 0.f), top);
        const uint32_t base = uint32_t(std::fmin(std::floor(clamped), top));
        const float blend = clamped - float(base);
        for (uint32_t k = 0; k < 2; ++k) {
            const uint32_t l = base + k;
            if (l >= shape.levels || (k == 1 && blend == 0.f)) continue;
            const uint32_t w = shape.level_width(l), h = shape.level_height(l);
            if (size_t{w} * h < 4096) continue;
            const float x = host.uv[2 * i] * float(w) - 0.5f, y = host.uv[2 * i + 1] * float(h) - 0.5f;
            const auto clamp = [](float v, uint32_t size) {
                return size_t(std::fmin(std::fmax(v, 0.f), float(size - 1)));
            };
            const size_t x0 = clamp(std::floor(x), w), x1 = clamp(std::floor(x) + 1, w);
            const size_t y0 = clamp(std::floor(y), h), y1 = clamp(std::floor(y) + 1, h);
            const size_t layer_first = size_t(host.layer[i]) * w * h * shape.channels;
            const size_t level_first = l == 0 ? 0 : shape.offset(l) - shape.level_values(0);
            std::vector<uint32_t>& to = l == 0 ? targets.level0 : targets.coarse;
            for (const size_t texel : {y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1})
                for (uint32_t g = 0; g < groups; ++g)
                    to.push_back(uint32_t((level_first + layer_first + texel * shape.channels) / 4 + g));
        }
    }
    return targets;
}

template <class T>
DeviceBuffer<T> on_device(const std::vector<T>& values) {
    DeviceBuffer<T> buffer(values.size());
    TVLM_CUDA_CHECK(cudaMemcpy(buffer.data(), values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice));
    return buffer;
}

// The rows of one job: each step alone and the whole step, GPU time per step.
void time_job(BenchGpu& gpu, const std::string& job, const FeatureChainShape& shape, const HostPoints& host,
              std::vector<Row>& rows) {
    const cudaStream_t stream = gpu.stream;
    const double bandwidth = gpu.machine.copy_bandwidth;
    const size_t count = host.lod.size(), image_values = shape.level_values(0), coarse_values = shape.coarse_values();
    DeviceBuffer<float> level0(image_values), coarse(coarse_values), grad_level0(image_values),
        grad_coarse(coarse_values), out(count * shape.channels), grad_out(count * shape.channels), grad_uv(2 * count),
        grad_lod(count);
    const DeviceBuffer<float> uv = on_device(host.uv), lod = on_device(host.lod);
    const DeviceBuffer<int32_t> layer = on_device(host.layer);
    TVLM_CUDA_CHECK(cudaMemsetAsync(level0.data(), 0, level0.bytes(), stream));
    {  // upstream gradients that are not zero: the backward skips the atomics of zeros
        std::vector<float> values(grad_out.size());
        uint32_t h = 777;
        for (float& g : values) g = float((h = h * 1664525u + 1013904223u) >> 8) * (2.0f / 16777216.0f) - 1.0f;
        TVLM_CUDA_CHECK(cudaMemcpy(grad_out.data(), values.data(), grad_out.bytes(), cudaMemcpyHostToDevice));
    }
    const PointBatch<float> points{uv.data(), lod.data(), layer.data(), count};
    const ChainLevels<const float> chain{level0.data(), coarse.data()};
    const ChainLevels<float> grad{grad_level0.data(), grad_coarse.data()};
    NonFiniteFlag nonfinite;  // the upstream check, as the Python ops run it
    const double b = sizeof(float), image = double(image_values) * b, rest = double(coarse_values) * b;
    const double samples_out = double(count) * shape.channels * b;
    const auto us = [&](double bytes) { return bytes / bandwidth * 1e6; };
    const auto add = [&](const std::string& method, const Timing& t, double floor_bytes) {
        rows.push_back({job, method, t.median_us, t.min_us, us(floor_bytes)});
    };
    constexpr int kSteps = 5;  // steps are long: fewer launches per timed run
    // Floors: the bytes each step must move (points and sparse texel reads not counted).
    add("chain: box levels 1.. from level 0",
        time_cuda(
            stream, [&] { build_feature_chain(shape, level0.data(), coarse.data(), stream); }, kSteps),
        image + rest);
    add("forward: trilinear samples",
        time_cuda(
            stream, [&] { sample_points_forward(shape, chain, points, out.data(), stream); }, kSteps),
        samples_out);
    // The backward's floor: the coarse gradient zeroed and read back by the fold, the
    // image's gradient written once (the design never zeroes nor reads it).
    add("backward: texel atomics, uv and lod, fold into the image's gradient",
        time_cuda(
            stream,
            [&] {
                sample_points_backward(shape, chain, points, grad_out.data(), grad, grad_uv.data(), grad_lod.data(),
                                       stream, nonfinite.device_word());
            },
            kSteps),
        image + 2 * rest + samples_out);
    add("(of it) fold: the chain's adjoint into level 0",
        time_cuda(
            stream, [&] { fold_chain_gradient(shape, grad, stream, nonfinite.device_word()); }, kSteps),
        image + rest);
    // What the hardware retires for the backward's own texel atomics (levels of 64x64 texels
    // and more), with nothing else to do: the scatter's share of the backward at best.
    if (!shape.planar_level0 && shape.channels % 4 == 0) {
        const AtomicTargets targets = texel_atomic_targets(shape, host);
        const DeviceBuffer<uint32_t> level0_targets = on_device(targets.level0),
                                     coarse_targets = on_device(targets.coarse);
        const size_t atomics = targets.level0.size() + targets.coarse.size();
        char millions[32];
        std::snprintf(millions, sizeof millions, "%.1fM", double(atomics) * 1e-6);
        add(std::string("ceiling: its ") + millions + " float4 texel atomics alone (levels of 64x64 texels and more)",
            time_cuda(
                stream,
                [&] {
                    add_ones_at(grad_level0.data(), level0_targets.data(), level0_targets.size(), stream);
                    add_ones_at(grad_coarse.data(), coarse_targets.data(), coarse_targets.size(), stream);
                },
                kSteps),
            double(atomics) * 16.0);
    }
    // A fixed texture (a model learning where to look): no texel atomics, no fold.
    const ChainLevels<float> no_texture_grad{};
    add("backward to uv and lod alone (the texture takes no gradient)",
        time_cuda(
            stream,
            [&] {
                sample_points_backward(shape, chain, points, grad_out.data(), no_texture_grad, grad_uv.data(),
                                       grad_lod.data(), stream, nonfinite.device_word());
            },
            kSteps),
        samples_out);
    add("whole step: chain + forward + backward",
        time_cuda(
            stream,
            [&] {
                build_feature_chain(shape, level0.data(), coarse.data(), stream);
                sample_points_forward(shape, chain, points, out.data(), stream);
                sample_points_backward(shape, chain, points, grad_out.data(), grad, grad_uv.data(), grad_lod.data(),
                                       stream, nonfinite.device_word());
            },
            kSteps),
        2 * image + 3 * rest);  // image read, coarse written; coarse gradient zeroed + read; image's written
    add("whole step, gradients to uv and lod alone: chain + forward + backward",
        time_cuda(
            stream,
            [&] {
                build_feature_chain(shape, level0.data(), coarse.data(), stream);
                sample_points_forward(shape, chain, points, out.data(), stream);
                sample_points_backward(shape, chain, points, grad_out.data(), no_texture_grad, grad_uv.data(),
                                       grad_lod.data(), stream, nonfinite.device_word());
            },
            kSteps),
        image + rest);  // image read, coarse written
}

}  // namespace

std::vector<Row> bench_grad(BenchGpu& gpu) {
    std::vector<Row> rows;
    constexpr size_t kPoints = size_t{1} << 20;
    // The RGBA job twice: level 0 channels last (a texture's texels) and planar (torch's
    // [B, C, H, W], what Python callers pass).
    for (const auto& [channels, size, planar] :
         {std::tuple{4u, 4096u, false}, std::tuple{4u, 4096u, true}, std::tuple{40u, 1024u, false}}) {
        const FeatureChainShape shape{1, channels, size, size, full_mip_count(size, size), planar};
        time_job(gpu,
                 "1M trilinear samples, per-sample LOD, [" + std::to_string(channels) + ", " + std::to_string(size) +
                     ", " + std::to_string(size) + "] float32" + (planar ? " planar" : "") + ", fwd + bwd",
                 shape, random_points(kPoints, size), rows);
        std::fprintf(stderr, "grad: %u channels measured\n", channels);
    }
    for (const uint32_t images : {1u, 32u}) {
        std::vector<PatchLayout> per_image;
        for (uint32_t b = 0; b < images; ++b) {
            FoveatedParams p;
            p.fill_budget = true;
            p.fixations = {{(b % 8 + 0.5) / 8.0, (b / 8 + 0.5) / 4.0}};
            per_image.push_back(foveated_layout(1024, 1024, p).layout);
        }
        const PatchLayout layout = batch_layouts(per_image);
        const FeatureChainShape shape{images, 4, 1024, 1024, full_mip_count(1024, 1024)};
        time_job(gpu,
                 std::to_string(layout.patches_per_image) + " foveated 16x16 patches x " + std::to_string(images) +
                     " image(s), [4, 1024, 1024] float32 each, fwd + bwd",
                 shape, patch_points(layout), rows);
        std::fprintf(stderr, "grad: %u image(s) of patches measured\n", images);
    }
    return rows;
}

}  // namespace tvlm
