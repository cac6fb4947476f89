// tvlm bench fields: the fused Gaussian-field kernels (cuda/fields/gaussian_field_kernels.h), 3D, float32,
// GPU time per call. Floors: the exponentials (one per pair) at the SFU rate, 16 per SM per
// clock on Hopper, and the pair's arithmetic (~25 FP32 operations forward, ~60 backward,
// divisions counted as one) at the FMA rate (128 per SM per clock, 2 FLOPs each), the larger
// of the two. The PyTorch way of the same jobs is in python -m texturevlm.bench fields.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "apps/bench/bench_gpu.h"
#include "apps/bench/bench_timing.h"
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/fields/gaussian_field_kernels.h"

namespace tvlm {

std::vector<Row> bench_fields(BenchGpu& gpu) {
    std::vector<Row> rows;
    const cudaStream_t stream = gpu.stream;
    int clock_khz = 0;
    int device = 0;
    TVLM_CUDA_CHECK(cudaGetDevice(&device));
    TVLM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
    const double hz = double(clock_khz) * 1e3, sms = gpu.prop.multiProcessorCount;
    const double exp_rate = sms * 16 * hz, flop_rate = sms * 128 * 2 * hz;
    struct Job {
        size_t gaussians, points;
    };
    for (const Job& j : {Job{1000, 500}, Job{10000, 1000000}}) {
        std::mt19937 random(1);
        std::uniform_real_distribution<float> unit(-1, 1);
        std::vector<float> points(j.points * 3), means(j.gaussians * 3), chol(j.gaussians * 6), weights(j.gaussians),
            upstream(j.points);
        for (float& p : points) p = unit(random);
        for (float& m : means) m = unit(random);
        for (size_t n = 0; n < j.gaussians; ++n) {
            const float l[6] = {0.2f, 0.05f * unit(random), 0.15f, 0.05f * unit(random), 0.05f * unit(random), 0.1f};
            std::copy(l, l + 6, &chol[n * 6]);
            weights[n] = unit(random);
        }
        for (float& g : upstream) g = unit(random);
        const auto upload = [](const std::vector<float>& v) {
            DeviceBuffer<float> d(v.size());
            TVLM_CUDA_CHECK(cudaMemcpy(d.data(), v.data(), d.bytes(), cudaMemcpyHostToDevice));
            return d;
        };
        const DeviceBuffer<float> d_points = upload(points), d_means = upload(means), d_chol = upload(chol),
                                  d_weights = upload(weights), d_up = upload(upstream);
        DeviceBuffer<float> values(j.points), g_points(points.size()), g_means(means.size()), g_chol(chol.size()),
            g_weights(weights.size());
        const FieldArgs<float> args{
            3, j.points, d_points.data(), j.gaussians, d_means.data(), d_chol.data(), d_weights.data()};
        const FieldGradientsOut<float> out{g_points.data(), g_means.data(), g_chol.data(), g_weights.data()};
        const double pairs = double(j.gaussians) * double(j.points);
        const auto floor_us = [&](double flops_per_pair, double exps_per_pair) {
            return std::max(pairs * flops_per_pair / flop_rate, pairs * exps_per_pair / exp_rate) * 1e6;
        };
        const std::string job = "Gaussian field 3D, N = " + std::to_string(j.gaussians) +
                                ", B = " + std::to_string(j.points) + ", float32";
        const int launches = j.points > 100000 ? 3 : kLaunches;
        const auto add = [&](const std::string& method, Timing t, double floor) {
            rows.push_back({job, method, t.median_us, t.min_us, floor});
        };
        add("forward (fused, values only)",
            time_cuda(
                stream, [&] { gaussian_field_forward(args, values.data(), static_cast<float*>(nullptr), stream); },
                launches),
            floor_us(25, 1));
        add("backward (points; Gaussians by chunks)",
            time_cuda(
                stream, [&] { gaussian_field_backward(args, d_up.data(), out, stream); }, launches),
            floor_us(2 * 60, 2));
        add("forward + backward",
            time_cuda(
                stream,
                [&] {
                    gaussian_field_forward(args, values.data(), static_cast<float*>(nullptr), stream);
                    gaussian_field_backward(args, d_up.data(), out, stream);
                },
                launches),
            floor_us(25 + 2 * 60, 3));
    }
    return rows;
}

}  // namespace tvlm
