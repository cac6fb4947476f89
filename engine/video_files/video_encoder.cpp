#include "engine/video_files/video_encoder.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libswscale/swscale.h>
}

#include <string>

#include "engine/error.h"
#include "engine/video_files/ffmpeg_owners.h"
#include "engine/video_files/video_decoder.h"

namespace tvlm {

struct VideoEncoder::State {
    std::string name, codec_name;  // name: the user's path, in every message
    int width = 0, height = 0;
    int64_t frames = 0;
    bool finished = false;
    AVFormatContext* format = nullptr;  // freed by the destructor (output contexts have no closer)
    ffmpeg::Codec codec;
    ffmpeg::Frame frame{ffmpeg::av().av_frame_alloc()};
    ffmpeg::Packet packet{ffmpeg::av().av_packet_alloc()};
    ffmpeg::Scaler scaler;

    [[noreturn]] void fail(const std::string& what) const { throw Error("video '" + name + "': " + what); }

    ~State() {
        if (format) {
            if (format->pb) ffmpeg::av().avio_closep(&format->pb);
            ffmpeg::av().avformat_free_context(format);
        }
    }

    void send(const AVFrame* f) {
        const int sent = ffmpeg::av().avcodec_send_frame(codec.get(), f);
        if (sent < 0)
            fail("the " + codec_name + " encoder refused frame " + std::to_string(frames) + " (" +
                 ffmpeg::error_text(sent) + ")");
        while (ffmpeg::av().avcodec_receive_packet(codec.get(), packet.get()) == 0) {
            ffmpeg::av().av_packet_rescale_ts(packet.get(), codec->time_base, format->streams[0]->time_base);
            packet->stream_index = 0;
            const int written = ffmpeg::av().av_interleaved_write_frame(format, packet.get());
            if (written < 0) fail("writing failed (" + ffmpeg::error_text(written) + ")");
        }
    }
};

namespace {

const AVCodec* choose_encoder(const std::string& asked, const AVOutputFormat* container) {
    if (!asked.empty()) return ffmpeg::av().avcodec_find_encoder_by_name(asked.c_str());
    if (container->video_codec == AV_CODEC_ID_H264)
        if (const AVCodec* h264 = ffmpeg::av().avcodec_find_encoder(AV_CODEC_ID_H264)) return h264;
    return ffmpeg::av().avcodec_find_encoder(AV_CODEC_ID_MPEG4);
}

}  // namespace

VideoEncoder::VideoEncoder(const std::string& path, uint32_t width, uint32_t height, const VideoEncoding& encoding)
    : state_(std::make_unique<State>()) {
    State& s = *state_;
    // Written under a temporary name (container_from is then the user's): errors name the user's.
    s.name = encoding.container_from.empty() ? path : encoding.container_from;
    ffmpeg::av().av_log_set_level(AV_LOG_FATAL);  // failures come back as Error; encoders' statistics are not wanted
    if (width == 0 || height == 0 || width > kMaxVideoDimension || height > kMaxVideoDimension)
        s.fail("frames of " + std::to_string(width) + "x" + std::to_string(height) +
               " cannot be encoded: sides must lie in [1, " + std::to_string(kMaxVideoDimension) + "]");
    if (encoding.frames_per_second <= 0) s.fail("the frame rate must be positive");
    s.width = int(width);
    s.height = int(height);
    const std::string& named = encoding.container_from.empty() ? path : encoding.container_from;
    int r = ffmpeg::av().avformat_alloc_output_context2(&s.format, nullptr, nullptr, named.c_str());
    if (r < 0 || !s.format)
        s.fail("FFmpeg knows no container for this file name (" + ffmpeg::error_text(r) + "): use .mp4, .mkv or .avi");
    const AVCodec* encoder = choose_encoder(encoding.codec, s.format->oformat);
    if (!encoder) s.fail("this FFmpeg has no encoder '" + encoding.codec + "'");
    s.codec_name = encoder->name;
    s.codec.reset(ffmpeg::av().avcodec_alloc_context3(encoder));
    AVCodecContext& c = *s.codec;
    c.width = s.width;
    c.height = s.height;
    c.time_base = AVRational{1, encoding.frames_per_second};
    c.framerate = AVRational{encoding.frames_per_second, 1};
    c.gop_size = encoding.keyframe_interval;
    const bool lossless = s.codec_name == "ffv1";
    c.pix_fmt = lossless ? AV_PIX_FMT_BGR0 : AV_PIX_FMT_YUV420P;
    if (!lossless && (width % 2 || height % 2))
        s.fail("the " + s.codec_name + " encoder stores colour at half resolution (4:2:0): give even sides, not " +
               std::to_string(width) + "x" + std::to_string(height));
    if (s.format->oformat->flags & AVFMT_GLOBALHEADER) c.flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    // YUV described as players read it (BT.709 from 720 lines up, else BT.601), limited range.
    const bool hd = s.height >= 720;
    if (!lossless) {
        c.colorspace = hd ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M;
        c.color_primaries = hd ? AVCOL_PRI_BT709 : AVCOL_PRI_SMPTE170M;
        c.color_trc = hd ? AVCOL_TRC_BT709 : AVCOL_TRC_SMPTE170M;
        c.color_range = AVCOL_RANGE_MPEG;
    }
    if ((r = ffmpeg::av().avcodec_open2(&c, encoder, nullptr)) < 0)
        s.fail("the " + s.codec_name + " encoder cannot start (" + ffmpeg::error_text(r) + ")");
    AVStream* stream = ffmpeg::av().avformat_new_stream(s.format, nullptr);
    if (!stream || ffmpeg::av().avcodec_parameters_from_context(stream->codecpar, &c) < 0)
        s.fail("cannot add a video stream");
    stream->time_base = c.time_base;
    if ((r = ffmpeg::av().avio_open(&s.format->pb, path.c_str(), AVIO_FLAG_WRITE)) < 0)
        s.fail("cannot be created (" + ffmpeg::error_text(r) + ")");
    // MP4/MOV: no edit list. With B-frames the muxer's edit list made FFmpeg 5.1's demuxer
    // drop a frame (29 of 30 decoded); without it every frame decodes, in order.
    AVDictionary* muxer_options = nullptr;
    ffmpeg::av().av_dict_set(&muxer_options, "use_editlist", "0", 0);
    r = ffmpeg::av().avformat_write_header(s.format, &muxer_options);
    ffmpeg::av().av_dict_free(&muxer_options);
    if (r < 0) s.fail("its header cannot be written (" + ffmpeg::error_text(r) + ")");
    s.frame->format = c.pix_fmt;
    s.frame->width = s.width;
    s.frame->height = s.height;
    if (ffmpeg::av().av_frame_get_buffer(s.frame.get(), 0) < 0) s.fail("out of memory for a frame");
    s.scaler.reset(ffmpeg::av().sws_getContext(s.width, s.height, AV_PIX_FMT_RGBA, s.width, s.height, c.pix_fmt,
                                               SWS_BILINEAR | SWS_ACCURATE_RND, nullptr, nullptr, nullptr));
    if (!s.scaler) s.fail("no colour conversion from RGBA to the encoder's format");
    if (!lossless) {
        const int* coefficients = ffmpeg::av().sws_getCoefficients(hd ? SWS_CS_ITU709 : SWS_CS_ITU601);
        ffmpeg::av().sws_setColorspaceDetails(s.scaler.get(), coefficients, 1, coefficients, 0, 0, 1 << 16, 1 << 16);
    }
}

VideoEncoder::VideoEncoder(VideoEncoder&&) noexcept = default;
VideoEncoder& VideoEncoder::operator=(VideoEncoder&&) noexcept = default;

VideoEncoder::~VideoEncoder() {
    if (state_ && !state_->finished) {
        try {
            finish();
        } catch (...) {  // a destructor cannot report it; call finish() to see errors
        }
    }
}

const std::string& VideoEncoder::codec() const { return state_->codec_name; }

void VideoEncoder::write(std::span<const uint8_t> rgba) {
    State& s = *state_;
    if (s.finished) s.fail("written after finish()");
    const size_t expected = size_t(s.width) * size_t(s.height) * 4;
    if (rgba.size() != expected)
        s.fail("a frame of " + std::to_string(rgba.size()) + " bytes; " + std::to_string(s.width) + "x" +
               std::to_string(s.height) + " RGBA8 is " + std::to_string(expected));
    if (ffmpeg::av().av_frame_make_writable(s.frame.get()) < 0) s.fail("out of memory for a frame");
    const uint8_t* planes[4] = {rgba.data(), nullptr, nullptr, nullptr};
    const int strides[4] = {s.width * 4, 0, 0, 0};
    ffmpeg::av().sws_scale(s.scaler.get(), planes, strides, 0, s.height, s.frame->data, s.frame->linesize);
    s.frame->pts = s.frames++;
    s.send(s.frame.get());
}

void VideoEncoder::finish() {
    State& s = *state_;
    if (s.finished) return;
    s.finished = true;  // once, even when it fails
    s.send(nullptr);
    const int r = ffmpeg::av().av_write_trailer(s.format);
    if (r < 0) s.fail("its trailer cannot be written (" + ffmpeg::error_text(r) + ")");
}

}  // namespace tvlm
