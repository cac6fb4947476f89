#pragma once
// How video's YUV values map to RGB: the matrices of BT.601, BT.709 and BT.2020 (Kr, Kb)
// and limited (16-235/240) or full range. Header-only and free of Vulkan: the decoder
// (engine/video_files), the CUDA conversion (cuda/video_frames.cu) and their tests share it.
#include <cstdint>

namespace tvlm {

enum class YuvMatrix : uint8_t { bt601, bt709, bt2020 };

struct YuvCoefficients {
    float kr, kb;
};

constexpr YuvCoefficients yuv_coefficients(YuvMatrix m) {
    return m == YuvMatrix::bt709 ? YuvCoefficients{0.2126f, 0.0722f}
           : m == YuvMatrix::bt2020 ? YuvCoefficients{0.2627f, 0.0593f}
                                    : YuvCoefficients{0.299f, 0.114f};
}

}  // namespace tvlm
