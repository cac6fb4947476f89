#pragma once
// Video files and streams in, decoded on the CPU by FFmpeg's libraries (libavformat,
// libavcodec, libswscale), each frame converted to RGBA8 rows for the engine's uploads.
// Hostile input gives Error with what was wrong (missing, not a media file, no video
// stream, no decoder for its codec, a damaged stream), never a crash; FFmpeg's own limits
// hold (dimensions it accepts), and ours: at most kMaxVideoDimension per side.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace tvlm {

inline constexpr uint32_t kMaxVideoDimension = 16384;

struct VideoInfo {
    uint32_t width = 0, height = 0;
    double frames_per_second = 0;  // the stream's average rate; 0 where the container has none
    int64_t frames = -1;           // as the container says; -1 where it does not
    std::string codec;             // the decoder's name, e.g. "h264", "ffv1"
};

class VideoDecoder {
public:
    // Opens `path_or_url` (anything libavformat opens) and its best video stream, with a
    // CPU decoder on `threads` threads (0: FFmpeg's choice). Throws Error, naming the file
    // and the reason.
    explicit VideoDecoder(const std::string& path_or_url, int threads = 0);
    VideoDecoder(VideoDecoder&&) noexcept;
    VideoDecoder& operator=(VideoDecoder&&) noexcept;
    ~VideoDecoder();

    const VideoInfo& info() const;
    // The next frame as RGBA8, tight rows, into `rgba` (width * height * 4 bytes); false at
    // the end of the stream. Throws Error for a wrong buffer size, a stream the decoder
    // rejects (damaged), or an end before the frame count the container states (truncated;
    // containers that state none, like Matroska, end where the data ends).
    bool next(std::span<uint8_t> rgba);
    int64_t frames_decoded() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace tvlm
