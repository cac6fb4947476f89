#pragma once
// Video files out, encoded on the CPU by FFmpeg's libraries: RGBA8 frames (alpha dropped)
// in, the container from the file's extension (.mp4, .mkv, .avi, ...). What `tvlm video
// --viz-video` writes, and what the tests make their test videos with.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace tvlm {

struct VideoEncoding {
    // An FFmpeg encoder name; empty: the container's usual one where FFmpeg has it (H.264
    // through libx264 for .mp4/.mkv), else MPEG-4 Part 2, which every FFmpeg build has.
    // "ffv1" is lossless (RGB kept exactly: decoded frames equal the written ones).
    std::string codec;
    int frames_per_second = 25;
    int keyframe_interval = 10;
    // The container follows this name's extension instead of the path's, and errors name it:
    // for writing under a temporary name that is renamed when complete (tvlm's all-or-nothing
    // outputs), where the user knows only the final name.
    std::string container_from;
};

class VideoEncoder {
public:
    // Throws Error, writing nothing, for an extension FFmpeg does not know, an encoder it
    // lacks, zero, odd (for 4:2:0 encoders) or oversize extents, or a file that cannot be
    // created.
    VideoEncoder(const std::string& path, uint32_t width, uint32_t height, const VideoEncoding& encoding = {});
    VideoEncoder(VideoEncoder&&) noexcept;
    VideoEncoder& operator=(VideoEncoder&&) noexcept;
    ~VideoEncoder();  // finishes the file if finish() was not called (errors then ignored)

    // One frame: width * height * 4 bytes of RGBA8, tight rows. Throws Error for a wrong size
    // or an encoder failure.
    void write(std::span<const uint8_t> rgba);
    // Flushes the encoder and writes the trailer. Throws Error if that fails.
    void finish();
    const std::string& codec() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace tvlm
