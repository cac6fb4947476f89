#include "engine/mips/reference_mips.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "engine/mips/box_filter.h"
#include "engine/textures/color.h"
#include "engine/textures/host_memory.h"

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

std::vector<std::vector<Tap>> axis_taps(uint32_t s, uint32_t d) {
    std::vector<std::vector<Tap>> taps(d);
    for (uint32_t i = 0; i < d; ++i) taps[i] = blit_taps(i, s, d);
    return taps;
}

// The box filter in its exact arithmetic (box_filter.h): integer weights, value N / D.
ImageF box_downsample(const ImageF& src, Extent2D dst, Format format) {
    const FormatInfo& info = format_info(format);
    const uint32_t channels = src.channels;
    const auto value = [&](uint32_t x, uint32_t y, uint32_t c) -> double {
        const float v = src.at(x, y, c);
        if (info.component != ComponentType::u8) return v;
        const auto byte = static_cast<uint32_t>(std::lround(static_cast<double>(v) * 255.0));
        return info.srgb && c < 3 ? srgb8_linear(byte) : byte;
    };
    ImageF out(dst.width, dst.height, channels);
    for (uint32_t y = 0; y < dst.height; ++y) {
        const BoxTaps ty = box_taps(y, src.height);
        for (uint32_t x = 0; x < dst.width; ++x) {
            const BoxTaps tx = box_taps(x, src.width);
            const double d = static_cast<double>(tx.sum) * ty.sum;
            for (uint32_t c = 0; c < channels; ++c) {
                double n = 0;  // exact for 8-bit values: integers below 2^53
                for (uint32_t b = 0; b < ty.count; ++b) {
                    double row = 0;
                    for (uint32_t a = 0; a < tx.count; ++a) row += tx.weight[a] * value(tx.first + a, ty.first + b, c);
                    n += ty.weight[b] * row;
                }
                out.at(x, y, c) = info.component != ComponentType::u8 ? static_cast<float>(n / d)
                                  : info.srgb && c < 3
                                      ? static_cast<float>(srgb8_encode(n, d) / 255.0)
                                      : static_cast<float>(
                                            unorm8_round(static_cast<uint64_t>(n), static_cast<uint64_t>(d)) / 255.0);
            }
        }
    }
    quantize_in_place(out, format);
    return out;
}

}  // namespace

ImageF reference_downsample(const ImageF& src, Extent2D dst, MipFilter filter, Format format) {
    assert(dst == level_extent(src.width, src.height, 1));
    if (filter == MipFilter::box) return box_downsample(src, dst, format);
    const uint32_t channels = src.channels;
    const bool srgb = format_info(format).srgb;
    const bool bytes = format == Format::rgba8_unorm;
    // Decode once per source texel: to linear light (sRGB) or to whole bytes (UNORM8).
    std::vector<double> linear(src.texels.size());
    for (size_t t = 0; t < linear.size(); ++t) {
        const bool colour = srgb && (t % channels) < 3;
        linear[t] = colour  ? srgb_to_linear(src.texels[t])
                    : bytes ? std::round(static_cast<double>(src.texels[t]) * 255.0)
                            : src.texels[t];
    }
    const auto tx = axis_taps(src.width, dst.width);
    const auto ty = axis_taps(src.height, dst.height);
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
                                 : bytes       ? std::floor(acc[c] + 0.5) / 255.0
                                               : acc[c];
                out.at(x, y, c) = static_cast<float>(v);
            }
        }
    }
    quantize_in_place(out, format);
    return out;
}

uint64_t reference_chain_bytes(uint32_t width, uint32_t height, uint32_t levels, uint32_t channels) {
    uint64_t bytes = 0;
    for (uint32_t l = 0; l < levels; ++l) {
        const Extent2D e = level_extent(width, height, l);
        bytes += uint64_t{e.width} * e.height * channels * sizeof(float);
    }
    return bytes;
}

void check_reference_chain_memory(uint32_t width, uint32_t height, uint32_t levels, uint32_t layers,
                                  const std::string& what) {
    const uint64_t chain = reference_chain_bytes(width, height, levels, 4);
    check_host_memory(chain * layers + reference_chain_bytes(width, height, 1, 4), what,
                      "the CPU reference holds every level in float RGBA: use the vulkan or cuda backend, or a "
                      "smaller image (TVLM_HOST_MEMORY_LIMIT caps what texturevlm takes)");
}

void regenerate_mip_levels(std::vector<ImageF>& chain, Format format, MipFilter filter, uint32_t levels) {
    assert(levels >= 1 && !chain.empty());
    chain.resize(levels);
    const uint32_t width = chain[0].width, height = chain[0].height;
    for (uint32_t l = 1; l < levels; ++l)
        chain[l] = reference_downsample(chain[l - 1], level_extent(width, height, l), filter, format);
}

std::vector<ImageF> reference_mip_chain(ImageF&& base, Format format, MipFilter filter, uint32_t levels) {
    assert(levels >= 1 && base.channels == format_info(format).channels);
    std::vector<ImageF> chain;
    chain.reserve(levels);
    quantize_in_place(base, format);
    chain.push_back(std::move(base));
    regenerate_mip_levels(chain, format, filter, levels);
    return chain;
}

std::vector<ImageF> reference_mip_chain(const ImageF& base, Format format, MipFilter filter, uint32_t levels) {
    return reference_mip_chain(ImageF(base), format, filter, levels);
}

}  // namespace tvlm
