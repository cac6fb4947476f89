#pragma once
// Test videos made in the test with FFmpeg's own encoders: RGBA frames (alpha 255) written
// as FFV1 in Matroska (lossless: decoded frames equal the written ones) or MPEG-4 Part 2 in
// AVI (lossy; AVI's header states the frame count). Raw FFmpeg calls, as an application
// would write them; errors fail the test.
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>

namespace tvlm::test {

class TestVideoWriter {
public:
    // `codec`: "ffv1" or "mpeg4"; the container follows the file's extension.
    TestVideoWriter(const std::string& path, const char* codec, uint32_t width, uint32_t height, int fps = 25)
        : width_(int(width)), height_(int(height)) {
        REQUIRE(avformat_alloc_output_context2(&format_, nullptr, nullptr, path.c_str()) >= 0);
        const AVCodec* encoder = avcodec_find_encoder_by_name(codec);
        REQUIRE(encoder);
        AVStream* stream = avformat_new_stream(format_, nullptr);
        REQUIRE(stream);
        codec_ = avcodec_alloc_context3(encoder);
        codec_->width = width_;
        codec_->height = height_;
        codec_->time_base = AVRational{1, fps};
        codec_->framerate = AVRational{fps, 1};
        const bool lossless = std::string(codec) == "ffv1";
        codec_->pix_fmt = lossless ? AV_PIX_FMT_BGR0 : AV_PIX_FMT_YUV420P;
        codec_->gop_size = 10;
        if (format_->oformat->flags & AVFMT_GLOBALHEADER) codec_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
        REQUIRE(avcodec_open2(codec_, encoder, nullptr) >= 0);
        REQUIRE(avcodec_parameters_from_context(stream->codecpar, codec_) >= 0);
        stream->time_base = codec_->time_base;
        REQUIRE(avio_open(&format_->pb, path.c_str(), AVIO_FLAG_WRITE) >= 0);
        REQUIRE(avformat_write_header(format_, nullptr) >= 0);
        frame_ = av_frame_alloc();
        frame_->format = codec_->pix_fmt;
        frame_->width = width_;
        frame_->height = height_;
        REQUIRE(av_frame_get_buffer(frame_, 0) >= 0);
        packet_ = av_packet_alloc();
        scaler_ = sws_getContext(width_, height_, AV_PIX_FMT_RGBA, width_, height_, codec_->pix_fmt,
                                 SWS_BILINEAR | SWS_ACCURATE_RND, nullptr, nullptr, nullptr);
        REQUIRE(scaler_);
    }
    TestVideoWriter(const TestVideoWriter&) = delete;
    TestVideoWriter& operator=(const TestVideoWriter&) = delete;
    ~TestVideoWriter() {
        if (!finished_) finish();
        sws_freeContext(scaler_);
        av_packet_free(&packet_);
        av_frame_free(&frame_);
        avcodec_free_context(&codec_);
        avio_closep(&format_->pb);
        avformat_free_context(format_);
    }

    void write(std::span<const uint8_t> rgba) {
        REQUIRE(rgba.size() == size_t(width_) * size_t(height_) * 4);
        REQUIRE(av_frame_make_writable(frame_) >= 0);
        const uint8_t* planes[4] = {rgba.data(), nullptr, nullptr, nullptr};
        const int strides[4] = {width_ * 4, 0, 0, 0};
        sws_scale(scaler_, planes, strides, 0, height_, frame_->data, frame_->linesize);
        frame_->pts = frames_++;
        send(frame_);
    }
    void finish() {
        send(nullptr);
        REQUIRE(av_write_trailer(format_) >= 0);
        finished_ = true;
    }

private:
    void send(AVFrame* frame) {
        REQUIRE(avcodec_send_frame(codec_, frame) >= 0);
        while (avcodec_receive_packet(codec_, packet_) == 0) {
            av_packet_rescale_ts(packet_, codec_->time_base, format_->streams[0]->time_base);
            packet_->stream_index = 0;
            REQUIRE(av_interleaved_write_frame(format_, packet_) >= 0);
        }
    }
    int width_, height_;
    int64_t frames_ = 0;
    bool finished_ = false;
    AVFormatContext* format_ = nullptr;
    AVCodecContext* codec_ = nullptr;
    AVFrame* frame_ = nullptr;
    AVPacket* packet_ = nullptr;
    SwsContext* scaler_ = nullptr;
};

}  // namespace tvlm::test
