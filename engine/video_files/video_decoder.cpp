#include "video_decoder.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <string>

#include "error.h"
#include "ffmpeg_owners.h"

namespace tvlm {

namespace {

struct FormatCloser {
    void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
};
using ffmpeg::error_text;

}  // namespace

struct VideoDecoder::State {
    std::string name;
    VideoInfo info;
    std::unique_ptr<AVFormatContext, FormatCloser> format;
    ffmpeg::Codec codec;
    ffmpeg::Frame frame{av_frame_alloc()};
    ffmpeg::Packet packet{av_packet_alloc()};
    ffmpeg::Scaler scaler;
    int stream = -1;
    bool flushed = false;  // the end of the file reached and the decoder told so
    int64_t decoded = 0;

    [[noreturn]] void fail(const std::string& what) const { throw Error("video '" + name + "': " + what); }

    // The next decoded frame in `frame`; false at the end of the stream.
    bool receive() {
        while (true) {
            const int got = avcodec_receive_frame(codec.get(), frame.get());
            if (got == 0) return true;
            if (got == AVERROR_EOF) return false;
            if (got != AVERROR(EAGAIN))
                fail("frame " + std::to_string(decoded) + " cannot be decoded (" + error_text(got) +
                     "): the stream is damaged or truncated");
            if (flushed) return false;
            const int read = av_read_frame(format.get(), packet.get());
            if (read == AVERROR_EOF) {
                flushed = true;
                avcodec_send_packet(codec.get(), nullptr);  // drain the frames the decoder holds
                continue;
            }
            if (read < 0)
                fail("reading after frame " + std::to_string(decoded) + " failed (" + error_text(read) +
                     "): the file is damaged or truncated");
            if (packet->stream_index == stream) {
                const int sent = avcodec_send_packet(codec.get(), packet.get());
                av_packet_unref(packet.get());
                if (sent < 0)
                    fail("frame " + std::to_string(decoded) + " cannot be decoded (" + error_text(sent) +
                         "): the stream is damaged or truncated");
            } else {
                av_packet_unref(packet.get());
            }
        }
    }
};

VideoDecoder::VideoDecoder(const std::string& path_or_url, int threads) : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.name = path_or_url;
    av_log_set_level(AV_LOG_FATAL);  // errors come back as Error, not as lines on stderr
    if (!s.frame || !s.packet) s.fail("out of memory");
    AVFormatContext* format = nullptr;
    if (const int r = avformat_open_input(&format, path_or_url.c_str(), nullptr, nullptr); r < 0)
        s.fail("cannot be opened (" + error_text(r) + ")");
    s.format.reset(format);
    if (const int r = avformat_find_stream_info(format, nullptr); r < 0)
        s.fail("is not a media file FFmpeg can read (" + error_text(r) + ")");
    const AVCodec* decoder = nullptr;
    s.stream = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (s.stream == AVERROR_STREAM_NOT_FOUND) s.fail("has no video stream");
    if (s.stream == AVERROR_DECODER_NOT_FOUND || !decoder) {
        const int any = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
        const char* codec = any >= 0 ? avcodec_get_name(format->streams[any]->codecpar->codec_id) : "unknown";
        s.fail("no decoder for its video codec '" + std::string(codec) + "' in this FFmpeg build");
    }
    if (s.stream < 0) s.fail("no usable video stream (" + error_text(s.stream) + ")");
    const AVStream* stream = format->streams[s.stream];
    const AVCodecParameters* parameters = stream->codecpar;
    if (parameters->width <= 0 || parameters->height <= 0 || parameters->width > int(kMaxVideoDimension) ||
        parameters->height > int(kMaxVideoDimension))
        s.fail("frames of " + std::to_string(parameters->width) + "x" + std::to_string(parameters->height) +
               ": each side must be 1.." + std::to_string(kMaxVideoDimension));
    s.codec.reset(avcodec_alloc_context3(decoder));
    if (!s.codec) s.fail("out of memory");
    if (const int r = avcodec_parameters_to_context(s.codec.get(), parameters); r < 0)
        s.fail("its codec parameters are invalid (" + error_text(r) + ")");
    s.codec->thread_count = threads;
    if (const int r = avcodec_open2(s.codec.get(), decoder, nullptr); r < 0)
        s.fail("the " + std::string(decoder->name) + " decoder cannot open its stream (" + error_text(r) + ")");
    s.info.width = uint32_t(parameters->width);
    s.info.height = uint32_t(parameters->height);
    s.info.frames_per_second = stream->avg_frame_rate.den ? av_q2d(stream->avg_frame_rate) : 0.0;
    s.info.frames = stream->nb_frames > 0 ? stream->nb_frames : -1;
    s.info.codec = decoder->name;
}

VideoDecoder::VideoDecoder(VideoDecoder&&) noexcept = default;
VideoDecoder& VideoDecoder::operator=(VideoDecoder&&) noexcept = default;
VideoDecoder::~VideoDecoder() = default;

const VideoInfo& VideoDecoder::info() const { return state_->info; }
int64_t VideoDecoder::frames_decoded() const { return state_->decoded; }

bool VideoDecoder::next(std::span<uint8_t> rgba) {
    State& s = *state_;
    const size_t bytes = size_t{s.info.width} * s.info.height * 4;
    if (rgba.size() != bytes)
        s.fail("a frame takes " + std::to_string(bytes) + " bytes of RGBA8 (" + std::to_string(s.info.width) + "x" +
               std::to_string(s.info.height) + "); the buffer has " + std::to_string(rgba.size()));
    if (!s.receive()) {
        // A file cut short ends cleanly for FFmpeg; where the container states its frame
        // count, the shortfall says so.
        if (s.info.frames > 0 && s.decoded < s.info.frames)
            s.fail("ends after " + std::to_string(s.decoded) + " of the " + std::to_string(s.info.frames) +
                   " frames its container announces: the file is truncated");
        return false;
    }
    const AVFrame& f = *s.frame;
    if (f.width != int(s.info.width) || f.height != int(s.info.height))
        s.fail("frame " + std::to_string(s.decoded) + " is " + std::to_string(f.width) + "x" + std::to_string(f.height) +
               ", the stream " + std::to_string(s.info.width) + "x" + std::to_string(s.info.height) +
               ": size changes within a stream are not supported");
    s.scaler.reset(sws_getCachedContext(s.scaler.release(), f.width, f.height, AVPixelFormat(f.format), f.width,
                                        f.height, AV_PIX_FMT_RGBA, SWS_BILINEAR | SWS_ACCURATE_RND, nullptr, nullptr,
                                        nullptr));
    if (!s.scaler) s.fail("frames in pixel format '" + std::string(av_get_pix_fmt_name(AVPixelFormat(f.format))) +
                          "' cannot be converted to RGBA");
    uint8_t* planes[4] = {rgba.data(), nullptr, nullptr, nullptr};
    const int strides[4] = {int(s.info.width * 4), 0, 0, 0};
    sws_scale(s.scaler.get(), f.data, f.linesize, 0, f.height, planes, strides);
    av_frame_unref(s.frame.get());
    ++s.decoded;
    return true;
}

}  // namespace tvlm
