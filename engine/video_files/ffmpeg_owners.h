#pragma once
// Owners of FFmpeg's objects (unique_ptr deleters) and its error text, shared by the
// decoder and the encoder, and `av()`, FFmpeg's functions as loaded at run time
// (ffmpeg_library.h). Include after FFmpeg's headers.
#include <memory>
#include <string>

#include "engine/video_files/ffmpeg_library.h"

namespace tvlm::ffmpeg {

// FFmpeg's functions: av().avcodec_open2(...). Throws Error (what to install) where the
// libraries cannot be loaded.
inline const Library& av() { return library(); }

inline std::string error_text(int code) {
    char text[AV_ERROR_MAX_STRING_SIZE] = {};
    ffmpeg::av().av_strerror(code, text, sizeof text);
    return text;
}

struct CodecFreer {
    void operator()(AVCodecContext* c) const { ffmpeg::av().avcodec_free_context(&c); }
};
struct FrameFreer {
    void operator()(AVFrame* f) const { ffmpeg::av().av_frame_free(&f); }
};
struct PacketFreer {
    void operator()(AVPacket* p) const { ffmpeg::av().av_packet_free(&p); }
};
struct ScalerFreer {
    void operator()(SwsContext* s) const { ffmpeg::av().sws_freeContext(s); }
};
using Codec = std::unique_ptr<AVCodecContext, CodecFreer>;
using Frame = std::unique_ptr<AVFrame, FrameFreer>;
using Packet = std::unique_ptr<AVPacket, PacketFreer>;
using Scaler = std::unique_ptr<SwsContext, ScalerFreer>;

}  // namespace tvlm::ffmpeg
