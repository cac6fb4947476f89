#include "engine/video_files/video_decoder.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <chrono>
#include <cstdio>
#include <string>

#if TVLM_NVDEC_SHARED_CONTEXT
#include <cuda.h>
#include <dlfcn.h>
extern "C" {
#include <libavutil/hwcontext_cuda.h>
}
#endif

#include "engine/error.h"
#include "engine/video_files/ffmpeg_owners.h"

namespace tvlm {

namespace {

struct FormatCloser {
    void operator()(AVFormatContext* f) const { ffmpeg::av().avformat_close_input(&f); }
};
struct BufferUnref {
    void operator()(AVBufferRef* b) const { ffmpeg::av().av_buffer_unref(&b); }
};
using ffmpeg::error_text;

#if TVLM_NVDEC_SHARED_CONTEXT
// The CUDA runtime's primary context of one device, retained through the driver API for
// as long as NVDEC uses it. FFmpeg's own primary_ctx option refuses a context the runtime
// already made with other scheduling flags ("incompatible flags"), which every CUDA
// application has done before it decodes; handing FFmpeg the context skips that check,
// and its frames are then valid in the runtime's kernels.
class PrimaryContext {
public:
    PrimaryContext() = default;
    explicit PrimaryContext(int ordinal) {
        library_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!library_) throw Error("the NVIDIA driver's libcuda.so.1 cannot be loaded (no NVIDIA driver here)");
        const auto init = reinterpret_cast<CUresult (*)(unsigned)>(dlsym(library_, "cuInit"));
        const auto get = reinterpret_cast<CUresult (*)(CUdevice*, int)>(dlsym(library_, "cuDeviceGet"));
        const auto retain = reinterpret_cast<CUresult (*)(CUcontext*, CUdevice)>(
            dlsym(library_, "cuDevicePrimaryCtxRetain"));
        release_ = reinterpret_cast<CUresult (*)(CUdevice)>(dlsym(library_, "cuDevicePrimaryCtxRelease_v2"));
        if (!init || !get || !retain || !release_) throw Error("this libcuda.so.1 lacks the driver API NVDEC needs");
        CUresult r = init(0);
        if (r == CUDA_SUCCESS) r = get(&device_, ordinal);
        if (r == CUDA_SUCCESS) r = retain(&context_, device_);
        if (r != CUDA_SUCCESS)
            throw Error("the driver refused the device (CUDA driver error " + std::to_string(int(r)) + ")");
    }
    PrimaryContext(PrimaryContext&& o) noexcept { *this = std::move(o); }
    PrimaryContext& operator=(PrimaryContext&& o) noexcept {
        std::swap(library_, o.library_);
        std::swap(release_, o.release_);
        std::swap(device_, o.device_);
        std::swap(context_, o.context_);
        return *this;
    }
    ~PrimaryContext() {
        if (context_) release_(device_);
        if (library_) dlclose(library_);
    }
    CUcontext context() const { return context_; }

private:
    void* library_ = nullptr;
    CUresult (*release_)(CUdevice) = nullptr;
    CUdevice device_ = 0;
    CUcontext context_ = nullptr;
};
#endif

// NVDEC was asked for: only CUDA frames, never a silent fall back to the CPU.
AVPixelFormat cuda_format(AVCodecContext*, const AVPixelFormat* formats) {
    for (const AVPixelFormat* f = formats; *f != AV_PIX_FMT_NONE; ++f)
        if (*f == AV_PIX_FMT_CUDA) return *f;
    return AV_PIX_FMT_NONE;
}

YuvMatrix matrix_of(const AVFrame& f) {
    switch (f.colorspace) {
        case AVCOL_SPC_BT709: return YuvMatrix::bt709;
        case AVCOL_SPC_BT2020_NCL:
        case AVCOL_SPC_BT2020_CL: return YuvMatrix::bt2020;
        case AVCOL_SPC_BT470BG:
        case AVCOL_SPC_SMPTE170M:
        case AVCOL_SPC_FCC: return YuvMatrix::bt601;
        default: return f.height >= 720 ? YuvMatrix::bt709 : YuvMatrix::bt601;  // unstated: what players assume
    }
}

int sws_matrix(YuvMatrix m) {
    return m == YuvMatrix::bt709 ? SWS_CS_ITU709 : m == YuvMatrix::bt2020 ? SWS_CS_BT2020 : SWS_CS_ITU601;
}

}  // namespace

struct VideoDecoder::State {
#if TVLM_NVDEC_SHARED_CONTEXT
    PrimaryContext primary;  // first: released after everything FFmpeg holds of it
#endif
    std::string name;
    VideoInfo info;
    std::unique_ptr<AVFormatContext, FormatCloser> format;
    ffmpeg::Codec codec;
    ffmpeg::Frame frame{ffmpeg::av().av_frame_alloc()};
    ffmpeg::Packet packet{ffmpeg::av().av_packet_alloc()};
    ffmpeg::Scaler scaler;
    std::unique_ptr<AVBufferRef, BufferUnref> cuda_device;  // NVDEC only
    VideoDecoderOptions options;
    int stream = -1;
    bool flushed = false;  // the end of the file reached and the decoder told so
    int64_t decoded = 0;
    // FFmpeg's interrupt callback: how long the input being waited for has been awaited, and
    // why a wait was abandoned.
    std::chrono::steady_clock::time_point waiting_since = std::chrono::steady_clock::now();
    enum class Stop : uint8_t { none, stalled, cancelled } stop = Stop::none;

    [[noreturn]] void fail(const std::string& what) const { throw Error("video '" + name + "': " + what); }

    static int interrupt(void* opaque) {
        State& s = *static_cast<State*>(opaque);
        if (s.options.cancelled && s.options.cancelled()) s.stop = Stop::cancelled;
        const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - s.waiting_since;
        if (s.options.stall_timeout > 0 && waited.count() > s.options.stall_timeout) s.stop = Stop::stalled;
        return s.stop != Stop::none;
    }
    void start_waiting() { waiting_since = std::chrono::steady_clock::now(); }
    // Why reading failed: the stall or the cancel where one abandoned the wait, else `otherwise`.
    [[noreturn]] void fail_reading(const std::string& otherwise) const {
        if (stop == Stop::cancelled) fail("interrupted");
        if (stop == Stop::stalled) {
            char seconds[32];
            std::snprintf(seconds, sizeof seconds, "%g", options.stall_timeout);
            fail("nothing arrived for " + std::string(seconds) +
                 " s: the source stalled (a server that accepts and does not answer?); give a longer timeout, or 0 "
                 "to wait for ever");
        }
        fail(otherwise);
    }

    // The next decoded frame in `frame`; false at the end of the stream.
    bool receive() {
        while (true) {
            const int got = ffmpeg::av().avcodec_receive_frame(codec.get(), frame.get());
            if (got == 0) return true;
            if (got == AVERROR_EOF) return false;
            if (got != AVERROR(EAGAIN))
                fail("frame " + std::to_string(decoded) + " cannot be decoded (" + error_text(got) +
                     (options.decode == VideoDecode::nvdec
                          ? "): NVDEC may not decode this codec or profile on this GPU, or the stream is damaged"
                          : "): the stream is damaged or truncated"));
            if (flushed) return false;
            start_waiting();
            const int read = ffmpeg::av().av_read_frame(format.get(), packet.get());
            if (read == AVERROR_EOF) {
                flushed = true;
                ffmpeg::av().avcodec_send_packet(codec.get(), nullptr);  // drain the frames the decoder holds
                continue;
            }
            if (read < 0)
                fail_reading("reading after frame " + std::to_string(decoded) + " failed (" + error_text(read) +
                             "): the file is damaged or truncated");
            if (packet->stream_index == stream) {
                const int sent = ffmpeg::av().avcodec_send_packet(codec.get(), packet.get());
                ffmpeg::av().av_packet_unref(packet.get());
                if (sent < 0)
                    fail("frame " + std::to_string(decoded) + " cannot be decoded (" + error_text(sent) +
                         "): the stream is damaged or truncated");
            } else {
                ffmpeg::av().av_packet_unref(packet.get());
            }
        }
    }
};

VideoDecoder::VideoDecoder(const std::string& path_or_url, int threads)
    : VideoDecoder(path_or_url, VideoDecoderOptions{.threads = threads}) {}

VideoDecoder::VideoDecoder(const std::string& path_or_url, const VideoDecoderOptions& options)
    : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.name = path_or_url;
    s.options = options;
    ffmpeg::av().av_log_set_level(AV_LOG_FATAL);  // errors come back as Error, not as lines on stderr
    if (!s.frame || !s.packet) s.fail("out of memory");
    if (!(options.stall_timeout >= 0)) s.fail("the stall timeout must be 0 (none) or more seconds");
    AVFormatContext* format = ffmpeg::av().avformat_alloc_context();
    if (!format) s.fail("out of memory");
    format->interrupt_callback = {&State::interrupt, &s};  // bounds every wait for input
    s.start_waiting();
    if (const int r = ffmpeg::av().avformat_open_input(&format, path_or_url.c_str(), nullptr, nullptr); r < 0)
        s.fail_reading("cannot be opened (" + error_text(r) + ")");  // a failed open freed `format`
    s.format.reset(format);
    s.start_waiting();
    if (const int r = ffmpeg::av().avformat_find_stream_info(format, nullptr); r < 0)
        s.fail_reading("is not a media file FFmpeg can read (" + error_text(r) + ")");
    const AVCodec* decoder = nullptr;
    s.stream = ffmpeg::av().av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (s.stream == AVERROR_STREAM_NOT_FOUND) s.fail("has no video stream");
    if (s.stream == AVERROR_DECODER_NOT_FOUND || !decoder) {
        const int any = ffmpeg::av().av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
        const char* codec = any >= 0 ? ffmpeg::av().avcodec_get_name(format->streams[any]->codecpar->codec_id)
                                     : "unknown";
        s.fail("no decoder for its video codec '" + std::string(codec) + "' in this FFmpeg build");
    }
    if (s.stream < 0) s.fail("no usable video stream (" + error_text(s.stream) + ")");
    const AVStream* stream = format->streams[s.stream];
    const AVCodecParameters* parameters = stream->codecpar;
    if (parameters->width <= 0 || parameters->height <= 0 || parameters->width > int(kMaxVideoDimension) ||
        parameters->height > int(kMaxVideoDimension))
        s.fail("frames of " + std::to_string(parameters->width) + "x" + std::to_string(parameters->height) +
               ": each side must be 1.." + std::to_string(kMaxVideoDimension));
    s.codec.reset(ffmpeg::av().avcodec_alloc_context3(decoder));
    if (!s.codec) s.fail("out of memory");
    if (const int r = ffmpeg::av().avcodec_parameters_to_context(s.codec.get(), parameters); r < 0)
        s.fail("its codec parameters are invalid (" + error_text(r) + ")");
    s.codec->thread_count = options.threads;
    s.info.decoder = "CPU";
    if (options.decode == VideoDecode::nvdec) {
        bool cuda = false;
        for (int i = 0; const AVCodecHWConfig* config = ffmpeg::av().avcodec_get_hw_config(decoder, i); ++i)
            cuda |= (config->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) &&
                    config->device_type == AV_HWDEVICE_TYPE_CUDA;
        if (!cuda) s.fail("the " + std::string(decoder->name) + " decoder of this FFmpeg build cannot decode on NVDEC");
        AVBufferRef* device = nullptr;
#if TVLM_NVDEC_SHARED_CONTEXT
        try {
            s.primary = PrimaryContext(options.cuda_device);
        } catch (const Error& e) {
            s.fail("NVDEC cannot start on CUDA device " + std::to_string(options.cuda_device) + ": " + e.what());
        }
        device = ffmpeg::av().av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
        if (!device) s.fail("out of memory");
        auto* shared = static_cast<AVCUDADeviceContext*>(reinterpret_cast<AVHWDeviceContext*>(device->data)->hwctx);
        shared->cuda_ctx = s.primary.context();  // the stream stays NULL: the legacy default stream
        int r = ffmpeg::av().av_hwdevice_ctx_init(device);
        if (r < 0) ffmpeg::av().av_buffer_unref(&device);
#else
        // Without CUDA's headers: FFmpeg retains the primary context itself, which it refuses
        // once the runtime made it with other flags (the decoder must come first then).
        AVDictionary* device_options = nullptr;
        ffmpeg::av().av_dict_set(&device_options, "primary_ctx", "1",
                                 0);  // the CUDA runtime's context: pointers usable there
        const int r = ffmpeg::av().av_hwdevice_ctx_create(
            &device, AV_HWDEVICE_TYPE_CUDA, std::to_string(options.cuda_device).c_str(), device_options, 0);
        ffmpeg::av().av_dict_free(&device_options);
#endif
        if (r < 0)
            s.fail("NVDEC cannot start on CUDA device " + std::to_string(options.cuda_device) + " (" + error_text(r) +
                   "): it needs an NVIDIA GPU and driver (libcuda.so.1, libnvcuvid.so.1; in containers "
                   "NVIDIA_DRIVER_CAPABILITIES must include 'video')");
        s.cuda_device.reset(device);
        s.codec->hw_device_ctx = ffmpeg::av().av_buffer_ref(device);
        s.codec->get_format = cuda_format;
        // Frame threads only parse here (NVDEC decodes), and with them the last frame of an
        // H.264 stream with B-frames was lost at the end (FFmpeg 5.1): one thread.
        s.codec->thread_count = 1;
        s.info.decoder = "NVDEC (CUDA device " + std::to_string(options.cuda_device) + ")";
    }
    if (const int r = ffmpeg::av().avcodec_open2(s.codec.get(), decoder, nullptr); r < 0)
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
    if (s.options.decode != VideoDecode::cpu)
        s.fail("NVDEC frames stay in CUDA memory: read them with next(DeviceFrame&)");
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
        s.fail("frame " + std::to_string(s.decoded) + " is " + std::to_string(f.width) + "x" +
               std::to_string(f.height) + ", the stream " + std::to_string(s.info.width) + "x" +
               std::to_string(s.info.height) + ": size changes within a stream are not supported");
    s.scaler.reset(ffmpeg::av().sws_getCachedContext(
        s.scaler.release(), f.width, f.height, AVPixelFormat(f.format), f.width, f.height, AV_PIX_FMT_RGBA,
        // Full chroma interpolation: nearer the bilinear rule of the CUDA conversion
        // (cuda/video/video_frames.cu; mean difference 3.1 -> 2.2 on the test chart).
        SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nullptr, nullptr, nullptr));
    if (!s.scaler)
        s.fail("frames in pixel format '" + std::string(ffmpeg::av().av_get_pix_fmt_name(AVPixelFormat(f.format))) +
               "' cannot be converted to RGBA");
    // YUV through the frame's own matrix and range (the NVDEC path's conversion uses the same).
    if (!(ffmpeg::av().av_pix_fmt_desc_get(AVPixelFormat(f.format))->flags & AV_PIX_FMT_FLAG_RGB)) {
        const int* coefficients = ffmpeg::av().sws_getCoefficients(sws_matrix(matrix_of(f)));
        ffmpeg::av().sws_setColorspaceDetails(s.scaler.get(), coefficients, f.color_range == AVCOL_RANGE_JPEG,
                                              coefficients, 1, 0, 1 << 16, 1 << 16);
    }
    uint8_t* planes[4] = {rgba.data(), nullptr, nullptr, nullptr};
    const int strides[4] = {int(s.info.width * 4), 0, 0, 0};
    ffmpeg::av().sws_scale(s.scaler.get(), f.data, f.linesize, 0, f.height, planes, strides);
    ffmpeg::av().av_frame_unref(s.frame.get());
    ++s.decoded;
    return true;
}

bool VideoDecoder::next(DeviceFrame& out) {
    State& s = *state_;
    if (s.options.decode != VideoDecode::nvdec) s.fail("CPU-decoded frames are RGBA8 rows: read them with next(span)");
    if (!s.receive()) {
        if (s.info.frames > 0 && s.decoded < s.info.frames)
            s.fail("ends after " + std::to_string(s.decoded) + " of the " + std::to_string(s.info.frames) +
                   " frames its container announces: the file is truncated");
        return false;
    }
    const AVFrame& f = *s.frame;  // kept until the next receive (which unreferences it)
    if (f.format != AV_PIX_FMT_CUDA || !f.hw_frames_ctx) s.fail("NVDEC returned a frame that is not in CUDA memory");
    const auto* frames = reinterpret_cast<const AVHWFramesContext*>(f.hw_frames_ctx->data);
    if (frames->sw_format != AV_PIX_FMT_NV12)
        s.fail("NVDEC gives " + std::string(ffmpeg::av().av_get_pix_fmt_name(frames->sw_format)) +
               " frames; the CUDA path converts 8-bit 4:2:0 (NV12) only: decode this video on the CPU");
    if (f.width != int(s.info.width) || f.height != int(s.info.height))
        s.fail("frame " + std::to_string(s.decoded) + " is " + std::to_string(f.width) + "x" +
               std::to_string(f.height) + ", the stream " + std::to_string(s.info.width) + "x" +
               std::to_string(s.info.height) + ": size changes within a stream are not supported");
    out = {f.data[0],    f.data[1],     size_t(f.linesize[0]), size_t(f.linesize[1]),
           s.info.width, s.info.height, matrix_of(f),          f.color_range == AVCOL_RANGE_JPEG};
    ++s.decoded;
    return true;
}

}  // namespace tvlm
