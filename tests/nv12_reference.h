#pragma once
// NV12 -> RGBA8 in double precision: the rule cuda/video/video_frames.cu follows (chroma co-sited
// with even columns, between rows, bilinear; engine/yuv.h's matrices), for the tests.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/yuv.h"

namespace tvlm {

// The rule in double: chroma co-sited with even columns, between rows, bilinear.
inline std::vector<uint8_t> nv12_reference(const std::vector<uint8_t>& luma, const std::vector<uint8_t>& chroma,
                                           uint32_t w, uint32_t h, YuvMatrix matrix, bool full) {
    const YuvCoefficients k = yuv_coefficients(matrix);
    const double kr = k.kr, kb = k.kb, kg = 1 - kr - kb;
    const uint32_t cw = (w + 1) / 2, ch = (h + 1) / 2;
    std::vector<uint8_t> rgba(size_t{w} * h * 4);
    auto byte = [](double v) { return uint8_t(std::floor(std::clamp(v, 0.0, 1.0) * 255.0 + 0.5)); };
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            const double cy = std::max((y - 0.5) * 0.5, 0.0), cx = x * 0.5;
            const uint32_t r0 = std::min(uint32_t(cy), ch - 1), r1 = std::min(r0 + 1, ch - 1);
            const uint32_t c0 = std::min(uint32_t(cx), cw - 1), c1 = std::min(c0 + 1, cw - 1);
            const double wy = cy - r0, wx = cx - c0;
            auto at = [&](uint32_t r, uint32_t c, uint32_t comp) {
                return double(chroma[(size_t{r} * cw + c) * 2 + comp]);
            };
            auto sample = [&](uint32_t comp) {
                const double top = at(r0, c0, comp) * (1 - wx) + at(r0, c1, comp) * wx;
                const double bottom = at(r1, c0, comp) * (1 - wx) + at(r1, c1, comp) * wx;
                return (top * (1 - wy) + bottom * wy - 128.0) / (full ? 255.0 : 224.0);
            };
            const double u = sample(0), v = sample(1);
            const double yy = (luma[size_t{y} * w + x] - (full ? 0.0 : 16.0)) / (full ? 255.0 : 219.0);
            uint8_t* out = &rgba[(size_t{y} * w + x) * 4];
            out[0] = byte(yy + 2 * (1 - kr) * v);
            out[1] = byte(yy - (2 * kb * (1 - kb) * u + 2 * kr * (1 - kr) * v) / kg);
            out[2] = byte(yy + 2 * (1 - kb) * u);
            out[3] = 255;
        }
    return rgba;
}

}  // namespace tvlm
