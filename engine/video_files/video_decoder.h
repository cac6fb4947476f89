#pragma once
// Video files and streams in, decoded on the CPU by FFmpeg's libraries (libavformat,
// libavcodec, libswscale), each frame converted to RGBA8 rows for the engine's uploads.
// Hostile input gives Error with what was wrong (missing, not a media file, no video
// stream, no decoder for its codec, a damaged stream), never a crash; FFmpeg's own limits
// hold (dimensions it accepts), and ours: at most kMaxVideoDimension per side.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "engine/yuv.h"

namespace tvlm {

inline constexpr uint32_t kMaxVideoDimension = 16384;

struct VideoInfo {
    uint32_t width = 0, height = 0;
    double frames_per_second = 0;  // the stream's average rate; 0 where the container has none
    int64_t frames = -1;           // as the container says; -1 where it does not
    std::string codec;             // the decoder's name, e.g. "h264", "ffv1"
    std::string decoder;           // which decoder runs: "CPU" or "NVDEC (CUDA device N)"
};

// Where frames are decoded. NVDEC is the NVIDIA GPU's video decoder, through FFmpeg's CUDA
// hardware decoding: frames stay in CUDA memory (next(DeviceFrame&)).
enum class VideoDecode : uint8_t {
    cpu,    // every platform; frames as RGBA8 rows in host memory (next(span))
    nvdec,  // an Error where the driver, the FFmpeg build or the codec does not allow it
};

struct VideoDecoderOptions {
    VideoDecode decode = VideoDecode::cpu;
    int threads = 0;      // CPU decoding threads (0: FFmpeg's choice)
    int cuda_device = 0;  // NVDEC: the CUDA device (its primary context is shared with the runtime)
    // The longest wait for input, in seconds: opening the source, or between two packets. A
    // stream whose server accepts and then sends nothing fails with Error after it; 0 waits
    // for ever. Files never come near it.
    double stall_timeout = kDefaultStallTimeout;
    // Polled while waiting for input (several times a second); true abandons the wait with
    // Error (Python: a Ctrl-C). May be empty.
    std::function<bool()> cancelled;
    static constexpr double kDefaultStallTimeout = 30.0;
};

// An NVDEC frame (Nv12Frame, yuv.h), valid until the next call of next(). Decoded on
// FFmpeg's CUDA stream, which is the legacy default stream: work on a stream created
// without cudaStreamNonBlocking is ordered after it.
using DeviceFrame = Nv12Frame;

class VideoDecoder {
public:
    // Opens `path_or_url` (anything libavformat opens) and its best video stream, with a
    // CPU decoder on `threads` threads (0: FFmpeg's choice). Throws Error, naming the file
    // and the reason.
    explicit VideoDecoder(const std::string& path_or_url, int threads = 0);
    // The same with a choice of decoder; NVDEC throws Error, naming why, where it cannot run.
    VideoDecoder(const std::string& path_or_url, const VideoDecoderOptions& options);
    VideoDecoder(VideoDecoder&&) noexcept;
    VideoDecoder& operator=(VideoDecoder&&) noexcept;
    ~VideoDecoder();

    const VideoInfo& info() const;
    // The next frame as RGBA8, tight rows, into `rgba` (width * height * 4 bytes); false at
    // the end of the stream. Throws Error for a wrong buffer size, a stream the decoder
    // rejects (damaged), or an end before the frame count the container states (truncated;
    // containers that state none, like Matroska, end where the data ends).
    // CPU decoding only (Error for NVDEC).
    bool next(std::span<uint8_t> rgba);
    // NVDEC only (Error for CPU decoding): the next frame in CUDA memory; false at the end.
    bool next(DeviceFrame& frame);
    int64_t frames_decoded() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace tvlm
