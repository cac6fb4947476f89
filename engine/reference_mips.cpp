#include "reference_mips.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "color.h"

namespace tvlm {

namespace {

struct Tap {
    uint32_t index;
    double weight;
};

// Taps of destination texel i along one axis, source size s, destination size d.
std::vector<Tap> blit_taps(uint32_t i, uint32_t s, uint32_t d) {
    const double x = (i + 0.5) * s / d - 0.5;  // in source texel-centre coordinates
    const double j0 = std::floor(x);
    const double f = x - j0;
    const auto clamp_index = [s](double j) {
        return static_cast<uint32_t>(std::clamp(j, 0.0, static_cast<double>(s - 1)));
    };
    return {{clamp_index(j0), 1.0 - f}, {clamp_index(j0 + 1.0), f}};
}

// Exact overlaps: in units of 1/d source texels, source texel j spans [j*d, (j+1)*d] and
// destination texel i spans [i*s, (i+1)*s]; overlaps are integers summing to s.
std::vector<Tap> box_taps(uint32_t i, uint32_t s, uint32_t d) {
    std::vector<Tap> taps;
    const uint64_t lo = uint64_t{i} * s, hi = uint64_t{i + 1} * s;
    for (uint64_t j = lo / d; j * d < hi; ++j) {
        const uint64_t overlap = std::min(hi, (j + 1) * d) - std::max(lo, j * d);
        if (overlap) taps.push_back({static_cast<uint32_t>(j), static_cast<double>(overlap) / s});
    }
    return taps;
}

std::vector<std::vector<Tap>> axis_taps(MipFilter filter, uint32_t s, uint32_t d) {
    std::vector<std::vector<Tap>> taps(d);
    for (uint32_t i = 0; i < d; ++i)
        taps[i] = filter == MipFilter::blit ? blit_taps(i, s, d) : box_taps(i, s, d);
    return taps;
}

}  // namespace

ImageF reference_downsample(const ImageF& src, Extent2D dst, MipFilter filter, Format format) {
    const uint32_t channels = src.channels;
    const bool srgb = format_info(format).srgb;
    const bool bytes = format == Format::rgba8_unorm;
    // Decode once per source texel: to linear light (sRGB) or to whole bytes (UNORM8).
    std::vector<double> linear(src.texels.size());
    for (size_t t = 0; t < linear.size(); ++t) {
        const bool colour = srgb && (t % channels) < 3;
        linear[t] = colour ? srgb_to_linear(src.texels[t])
                  : bytes  ? std::round(static_cast<double>(src.texels[t]) * 255.0)
                           : src.texels[t];
    }
    const auto tx = axis_taps(filter, src.width, dst.width);
    const auto ty = axis_taps(filter, src.height, dst.height);
    ImageF out(dst.width, dst.height, channels);
    std::vector<double> acc(channels);
    for (uint32_t y = 0; y < dst.height; ++y) {
        for (uint32_t x = 0; x < dst.width; ++x) {
            std::fill(acc.begin(), acc.end(), 0.0);
            for (const Tap& a : ty[y])
                for (const Tap& b : tx[x]) {
                    const double w = a.weight * b.weight;
                    const size_t base = (size_t{a.index} * src.width + b.index) * channels;
                    for (uint32_t c = 0; c < channels; ++c) acc[c] += w * linear[base + c];
                }
            for (uint32_t c = 0; c < channels; ++c) {
                const double v = srgb && c < 3 ? linear_to_srgb(acc[c])
                               : bytes         ? std::floor(acc[c] + 0.5) / 255.0
                                               : acc[c];
                out.at(x, y, c) = static_cast<float>(v);
            }
        }
    }
    return quantize(out, format);
}

std::vector<ImageF> reference_mip_chain(const ImageF& base, Format format, MipFilter filter,
                                        uint32_t levels) {
    assert(levels >= 1 && base.channels == format_info(format).channels);
    std::vector<ImageF> chain;
    chain.push_back(quantize(base, format));
    for (uint32_t l = 1; l < levels; ++l) {
        chain.push_back(reference_downsample(chain.back(), level_extent(base.width, base.height, l), filter, format));
    }
    return chain;
}

}  // namespace tvlm
