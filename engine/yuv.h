#pragma once
// How video's YUV values map to RGB: the matrices of BT.601, BT.709 and BT.2020 (Kr, Kb)
// and limited (16-235/240) or full range. Header-only and free of Vulkan: the decoder
// (engine/video_files), the CUDA conversion (cuda/video/video_frames.cu) and their tests share it.
#include <cstddef>
#include <cstdint>

namespace tvlm {

enum class YuvMatrix : uint8_t { bt601, bt709, bt2020 };

struct YuvCoefficients {
    float kr, kb;
};

constexpr YuvCoefficients yuv_coefficients(YuvMatrix m) {
    return m == YuvMatrix::bt709    ? YuvCoefficients{0.2126f, 0.0722f}
           : m == YuvMatrix::bt2020 ? YuvCoefficients{0.2627f, 0.0593f}
                                    : YuvCoefficients{0.299f, 0.114f};
}

// An 8-bit 4:2:0 frame with interleaved chroma (NV12) in CUDA memory, as NVDEC decodes it
// (VideoDecoder::next) and cuda/video/video_frames.h converts it: chroma sited as MPEG-2/H.264
// place it (horizontally with even luma columns, vertically between rows).
struct Nv12Frame {
    const uint8_t* luma = nullptr;
    const uint8_t* chroma = nullptr;
    size_t luma_pitch = 0, chroma_pitch = 0;
    uint32_t width = 0, height = 0;
    // The frame's own colour description; an unstated matrix is BT.709 from 720 lines up,
    // else BT.601, as players assume (CPU decoding converts the same way).
    YuvMatrix matrix = YuvMatrix::bt709;
    bool full_range = false;
};

}  // namespace tvlm
