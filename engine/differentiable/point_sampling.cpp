#include "engine/differentiable/point_sampling.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/error.h"

namespace tvlm {

namespace {

void check(const FeatureChain& chain, const PointQuery& points) {
    if (chain.levels.empty()) throw Error("the feature chain has no levels");
    if (points.uv.size() != 2 * points.count())
        throw Error("uv holds two values per point: " + std::to_string(points.uv.size()) + " for " +
                    std::to_string(points.count()) + " points");
    if (!points.layer.empty() && points.layer.size() != points.count())
        throw Error("one layer per point, or none (all layer 0)");
    for (size_t i = 0; i < points.count(); ++i) {
        if (!std::isfinite(points.uv[2 * i]) || !std::isfinite(points.uv[2 * i + 1]) || !std::isfinite(points.lod[i]))
            throw Error("point " + std::to_string(i) + " has a non-finite u, v or lod");
        if (!points.layer.empty() && points.layer[i] >= chain.layers)
            throw Error("point " + std::to_string(i) + " reads layer " + std::to_string(points.layer[i]) + " of " +
                        std::to_string(chain.layers));
    }
}

// The four texels and weights of a bilinear sample of level l (clamp to edge).
struct Bilinear {
    uint32_t x[2], y[2];
    double a, b;  // fractions along x and y
    double width, height;
};

Bilinear bilinear_at(const FeatureChain& chain, uint32_t l, double u, double v) {
    Bilinear s;
    s.width = chain.level_width(l);
    s.height = chain.level_height(l);
    const double x = u * s.width - 0.5, y = v * s.height - 0.5;
    const double fx = std::floor(x), fy = std::floor(y);
    s.a = x - fx;
    s.b = y - fy;
    const auto clamp = [](double i, double size) { return uint32_t(std::clamp(i, 0.0, size - 1)); };
    s.x[0] = clamp(fx, s.width);
    s.x[1] = clamp(fx + 1, s.width);
    s.y[0] = clamp(fy, s.height);
    s.y[1] = clamp(fy + 1, s.height);
    return s;
}

// The level pair and blend of a point's lod: levels base and base + 1 (if it exists), the
// coarser weighted `blend`; `free`: lod is inside the chain (its derivative is not zero).
struct Levels {
    uint32_t base;
    double blend;
    bool has_next, free;
};

Levels levels_at(const FeatureChain& chain, double lod) {
    const double top = double(chain.levels.size() - 1);
    const double clamped = std::clamp(lod, 0.0, top);
    Levels s;
    s.base = uint32_t(std::min(std::floor(clamped), top));
    s.blend = clamped - s.base;
    s.has_next = s.base + 1 < chain.levels.size();
    s.free = lod > 0.0 && lod < top;
    return s;
}

double texel(const FeatureChain& chain, uint32_t l, uint32_t layer, uint32_t c, uint32_t x, uint32_t y) {
    return chain.levels[l][chain.at(l, layer, c, x, y)];
}

double bilinear_value(const FeatureChain& chain, uint32_t l, const Bilinear& s, uint32_t layer, uint32_t c) {
    const auto t = [&](int i, int j) { return texel(chain, l, layer, c, s.x[i], s.y[j]); };
    return (1 - s.b) * ((1 - s.a) * t(0, 0) + s.a * t(1, 0)) + s.b * ((1 - s.a) * t(0, 1) + s.a * t(1, 1));
}

}  // namespace

std::vector<double> sample_points(const FeatureChain& chain, const PointQuery& points) {
    check(chain, points);
    std::vector<double> out(points.count() * chain.channels);
    for (size_t i = 0; i < points.count(); ++i) {
        const uint32_t layer = points.layer.empty() ? 0 : points.layer[i];
        const double u = points.uv[2 * i], v = points.uv[2 * i + 1];
        const Levels lv = levels_at(chain, points.lod[i]);
        const Bilinear lo = bilinear_at(chain, lv.base, u, v);
        for (uint32_t c = 0; c < chain.channels; ++c) {
            double value = bilinear_value(chain, lv.base, lo, layer, c);
            if (lv.blend > 0)
                value = (1 - lv.blend) * value +
                        lv.blend * bilinear_value(chain, lv.base + 1, bilinear_at(chain, lv.base + 1, u, v), layer, c);
            out[i * chain.channels + c] = value;
        }
    }
    return out;
}

PointGradients sample_points_backward(const FeatureChain& chain, const PointQuery& points,
                                      std::span<const double> grad_out) {
    check(chain, points);
    if (grad_out.size() != points.count() * chain.channels)
        throw Error("the output gradient is [points, channels]: " + std::to_string(grad_out.size()) + " values for " +
                    std::to_string(points.count() * chain.channels));
    PointGradients g;
    for (const auto& level : chain.levels) g.levels.emplace_back(level.size(), 0.0);
    g.uv.assign(points.uv.size(), 0.0);
    g.lod.assign(points.count(), 0.0);
    for (size_t i = 0; i < points.count(); ++i) {
        const uint32_t layer = points.layer.empty() ? 0 : points.layer[i];
        const double u = points.uv[2 * i], v = points.uv[2 * i + 1];
        const Levels lv = levels_at(chain, points.lod[i]);
        const uint32_t count = lv.has_next ? 2 : 1;
        for (uint32_t k = 0; k < count; ++k) {
            const uint32_t l = lv.base + k;
            const double weight = k == 0 ? 1 - lv.blend : lv.blend;
            const Bilinear s = bilinear_at(chain, l, u, v);
            for (uint32_t c = 0; c < chain.channels; ++c) {
                const double go = grad_out[i * chain.channels + c];
                const auto t = [&](int a, int b) { return texel(chain, l, layer, c, s.x[a], s.y[b]); };
                // d sample / d texels (clamped duplicates add up).
                const double gw = go * weight;
                g.levels[l][chain.at(l, layer, c, s.x[0], s.y[0])] += gw * (1 - s.a) * (1 - s.b);
                g.levels[l][chain.at(l, layer, c, s.x[1], s.y[0])] += gw * s.a * (1 - s.b);
                g.levels[l][chain.at(l, layer, c, s.x[0], s.y[1])] += gw * (1 - s.a) * s.b;
                g.levels[l][chain.at(l, layer, c, s.x[1], s.y[1])] += gw * s.a * s.b;
                // d sample / d (u, v): the bilinear's slopes times the level's size.
                g.uv[2 * i] += gw * s.width * ((1 - s.b) * (t(1, 0) - t(0, 0)) + s.b * (t(1, 1) - t(0, 1)));
                g.uv[2 * i + 1] += gw * s.height * ((1 - s.a) * (t(0, 1) - t(0, 0)) + s.a * (t(1, 1) - t(1, 0)));
                // d sample / d lod = next level's bilinear - this one's.
                if (lv.free) g.lod[i] += go * (k == 0 ? -1.0 : 1.0) * bilinear_value(chain, l, s, layer, c);
            }
        }
    }
    return g;
}

}  // namespace tvlm
