#pragma once
// The embedded default video (what `tvlm video` runs on without a FILE, as `tvlm sample`
// runs on the test chart): the test chart with a bright square moving across it, then a
// scene cut to the chart mirrored. Written losslessly (FFV1 in Matroska), so decoded
// frames equal test_clip_frame().
#include <cstdint>
#include <string>
#include <vector>

namespace tvlm {

struct TestClip {
    uint32_t width = 640, height = 432, frames = 48, cut = 32;
    uint32_t square = 48;        // side of the moving square, in texels
    int keyframe_interval = 10;  // for lossy encoders
};

// Frame `index` of the clip as RGBA8, tight rows.
std::vector<uint8_t> test_clip_frame(const TestClip& clip, uint32_t index);
// Writes the clip to `path`, losslessly (FFV1, .mkv) or with the encoder `codec` (e.g.
// "libx264" into .mp4, for benchmarks of real decoders). Throws Error if it cannot be written.
void write_test_clip(const std::string& path, const TestClip& clip = {}, const std::string& codec = "ffv1");

}  // namespace tvlm
