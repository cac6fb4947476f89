// NVDEC through FFmpeg: an H.264 clip (made here with libx264) decoded on the GPU. H.264
// decoding is exact, so NVDEC's NV12 planes must equal libavcodec's CPU decode bit for bit;
// their RGBA8 conversion must follow the double rule (nv12_reference.h) within 1; the
// frames then feed a CudaVideoTexture whose levels must equal a full regeneration after
// every frame. The CPU decoder's own RGBA (swscale) is compared and reported. Where NVDEC
// cannot start, the suite says why (and checks that the reason names it).
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cuda_pipelines/cuda_array_texture.h"
#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/cuda_check.h"
#include "tests/cuda_level_bytes.h"
#include "cuda_pipelines/cuda_video_texture.h"
#include "engine/error.h"
#include "tests/nv12_reference.h"
#include "engine/video_files/test_clip.h"
#include "engine/video_files/video_decoder.h"
#include "engine/video_files/video_encoder.h"
#include "cuda/video/video_frames.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

namespace tvlm {
namespace {

// libavcodec's CPU decode of the whole file: yuv420p frames as (luma, interleaved chroma).
struct YuvFrames {
    std::vector<std::vector<uint8_t>> luma, chroma;
};
YuvFrames cpu_yuv(const std::string& path) {
    AVFormatContext* format = nullptr;
    REQUIRE(avformat_open_input(&format, path.c_str(), nullptr, nullptr) == 0);
    REQUIRE(avformat_find_stream_info(format, nullptr) >= 0);
    const AVCodec* codec = avcodec_find_decoder(format->streams[0]->codecpar->codec_id);
    AVCodecContext* context = avcodec_alloc_context3(codec);
    REQUIRE(avcodec_parameters_to_context(context, format->streams[0]->codecpar) >= 0);
    REQUIRE(avcodec_open2(context, codec, nullptr) == 0);
    AVPacket* packet = av_packet_alloc();
    AVFrame* frame = av_frame_alloc();
    YuvFrames out;
    const auto take = [&] {
        while (avcodec_receive_frame(context, frame) == 0) {
            REQUIRE(frame->format == AV_PIX_FMT_YUV420P);
            const auto w = size_t(frame->width), h = size_t(frame->height), cw = (w + 1) / 2, ch = (h + 1) / 2;
            const auto pitch = [&](int plane) { return size_t(frame->linesize[plane]); };
            std::vector<uint8_t> luma(w * h), chroma(cw * ch * 2);
            for (size_t y = 0; y < h; ++y) std::copy_n(frame->data[0] + y * pitch(0), w, &luma[y * w]);
            for (size_t y = 0; y < ch; ++y)
                for (size_t x = 0; x < cw; ++x) {
                    chroma[(y * cw + x) * 2] = frame->data[1][y * pitch(1) + x];
                    chroma[(y * cw + x) * 2 + 1] = frame->data[2][y * pitch(2) + x];
                }
            out.luma.push_back(std::move(luma));
            out.chroma.push_back(std::move(chroma));
        }
    };
    while (av_read_frame(format, packet) >= 0) {
        REQUIRE(avcodec_send_packet(context, packet) >= 0);
        av_packet_unref(packet);
        take();
    }
    avcodec_send_packet(context, nullptr);
    take();
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&context);
    avformat_close_input(&format);
    return out;
}

TEST_CASE("NVDEC frames match the CPU decoder's and update a CUDA video texture exactly") {
    const TestClip clip{.width = 640, .height = 360, .frames = 30, .cut = 20};
    const auto path = std::filesystem::temp_directory_path() / "tvlm_test_nvdec.mp4";
    {
        VideoEncoder encoder(path.string(), clip.width, clip.height, {.codec = "libx264"});
        for (uint32_t f = 0; f < clip.frames; ++f) encoder.write(test_clip_frame(clip, f));
        encoder.finish();
    }
    std::optional<VideoDecoder> nvdec;
    try {
        nvdec.emplace(path.string(), VideoDecoderOptions{.decode = VideoDecode::nvdec});
    } catch (const Error& e) {
        MESSAGE("NVDEC is not available here: " << std::string(e.what()));
        CHECK(std::string(e.what()).find("NVDEC") != std::string::npos);
        return;
    }
    CHECK(nvdec->info().decoder == "NVDEC (CUDA device 0)");
    VideoDecoder cpu(path.string());
    const YuvFrames yuv = cpu_yuv(path.string());
    REQUIRE(yuv.luma.size() == clip.frames);
    CudaVideoTexture video(clip.width, clip.height);
    CudaArrayTexture full = CudaArrayTexture::create(
        TextureDesc::sampled_2d(clip.width, clip.height, Format::rgba8_unorm));
    const CudaBoxMips full_mips(full.mipmaps());
    const uint32_t cw = (clip.width + 1) / 2, ch = (clip.height + 1) / 2;
    std::vector<uint8_t> from_cpu(size_t{clip.width} * clip.height * 4), from_gpu(from_cpu.size());
    std::vector<uint8_t> luma(size_t{clip.width} * clip.height), chroma(size_t{cw} * ch * 2);
    uint32_t frames = 0, whole = 0, cuts = 0;
    double worst_swscale_mean = 0, copied = 0;
    int worst_rule = 0;
    DeviceFrame frame;
    while (nvdec->next(frame)) {
        CAPTURE(frames);
        REQUIRE(frames < clip.frames);
        REQUIRE(cpu.next(from_cpu));
        CHECK(frame.matrix == YuvMatrix::bt601);  // what the encoder wrote for 360 lines
        CHECK(!frame.full_range);
        // NVDEC's work is on the legacy default stream: these copies are ordered after it.
        TVLM_CUDA_CHECK(cudaMemcpy2D(luma.data(), clip.width, frame.luma, frame.luma_pitch, clip.width, clip.height,
                                     cudaMemcpyDeviceToHost));
        TVLM_CUDA_CHECK(
            cudaMemcpy2D(chroma.data(), 2 * cw, frame.chroma, frame.chroma_pitch, 2 * cw, ch, cudaMemcpyDeviceToHost));
        CHECK(luma == yuv.luma[frames]);
        CHECK(chroma == yuv.chroma[frames]);
        nv12_to_rgba8(frame, video.frame(), video.frame_pitch(), nullptr);
        TVLM_CUDA_CHECK(cudaMemcpy(from_gpu.data(), video.frame(), from_gpu.size(), cudaMemcpyDeviceToHost));
        const std::vector<uint8_t> rule = nv12_reference(luma, chroma, clip.width, clip.height, frame.matrix, false);
        double swscale_sum = 0;
        for (size_t i = 0; i < from_gpu.size(); ++i) {
            worst_rule = std::max(worst_rule, std::abs(int{from_gpu[i]} - int{rule[i]}));
            swscale_sum += std::abs(int{from_gpu[i]} - int{from_cpu[i]});
        }
        worst_swscale_mean = std::max(worst_swscale_mean, swscale_sum / double(from_gpu.size()));
        full_mips.generate_from(video.frame(), video.frame_pitch(), nullptr);  // before update() reads the frame
        video.update(nullptr);
        const FrameChanges changes = video.changes();
        whole += changes.whole_frame;
        cuts += frames > 0 && 2 * changes.tiles_changed > video.grid().tile_count();  // the default rule
        copied += changes.copied_fraction;
        TVLM_CUDA_CHECK(cudaDeviceSynchronize());
        for (uint32_t level = 0; level < full.desc().mip_levels(); ++level) {
            CAPTURE(level);
            CHECK(level_bytes(video.mipmaps(), level) == level_bytes(full.mipmaps(), level));
        }
        ++frames;
    }
    CHECK(frames == clip.frames);
    CHECK(worst_rule <= 1);
    MESSAGE("NVDEC: planes equal to the CPU decode; RGBA within "
            << worst_rule << " of the rule; against the CPU "
            << "decoder's swscale RGBA a mean difference of at most " << worst_swscale_mean << " (its chroma "
            << "filter differs); " << whole << " of " << frames << " frames whole, " << 100.0 * copied / frames
            << "% of texels copied per frame");
    CHECK(whole == 1 + cuts);  // the first frame and the scene cuts, which the GPU updated tile by tile
    CHECK(cuts >= 1);          // the clip's cut at least
    CHECK_THROWS_WITH_AS(nvdec->next(from_cpu), doctest::Contains("next(DeviceFrame&)"), Error);
}

}  // namespace
}  // namespace tvlm
