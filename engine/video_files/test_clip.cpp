#include "engine/video_files/test_clip.h"

#include <algorithm>

#include "engine/textures/test_chart.h"
#include "engine/video_files/video_encoder.h"

namespace tvlm {

namespace {

std::vector<uint8_t> clip_frame(const Rgba8Image& chart, const TestClip& clip, uint32_t index) {
    std::vector<uint8_t> frame(chart.texels.size());
    const bool mirrored = index >= clip.cut;
    for (uint32_t y = 0; y < clip.height; ++y)
        for (uint32_t x = 0; x < clip.width; ++x) {
            const uint32_t from = mirrored ? clip.width - 1 - x : x;
            std::copy_n(&chart.texels[(size_t{y} * clip.width + from) * 4], 4,
                        &frame[(size_t{y} * clip.width + x) * 4]);
        }
    // A square moving right and down by 9 and 4 texels a frame.
    const uint32_t side = std::min({clip.square, clip.width - 1, clip.height - 1});
    const uint32_t x0 = (16 + 9 * index) % (clip.width - side), y0 = (40 + 4 * index) % (clip.height - side);
    for (uint32_t y = y0; y < y0 + side; ++y)
        for (uint32_t x = x0; x < x0 + side; ++x) {
            uint8_t* texel = &frame[(size_t{y} * clip.width + x) * 4];
            texel[0] = 250;
            texel[1] = 240;
            texel[2] = uint8_t(60 + 4 * index);
            texel[3] = 255;
        }
    return frame;
}

}  // namespace

std::vector<uint8_t> test_clip_frame(const TestClip& clip, uint32_t index) {
    return clip_frame(make_test_chart(clip.width, clip.height), clip, index);
}

void write_test_clip(const std::string& path, const TestClip& clip, const std::string& codec) {
    const Rgba8Image chart = make_test_chart(clip.width, clip.height);
    VideoEncoder encoder(path, clip.width, clip.height, {.codec = codec, .keyframe_interval = clip.keyframe_interval});
    for (uint32_t f = 0; f < clip.frames; ++f) encoder.write(clip_frame(chart, clip, f));
    encoder.finish();
}

}  // namespace tvlm
