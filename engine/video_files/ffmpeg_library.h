#pragma once
// FFmpeg's libraries, loaded when video is first used (dlopen), not linked: a build with
// FFmpeg's headers (a wheel) runs where the libraries are absent, and only its video calls
// fail, saying what to install. The sonames are the major versions the headers declare:
// FFmpeg's ABI (its structs' layouts) changes between them.
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include "engine/video_files/ffmpeg_available.h"

namespace tvlm::ffmpeg {

// Each function the decoder and the encoder call, with the library that exports it.
#define TVLM_FFMPEG_FUNCTIONS(X)                \
    X(avutil, av_strerror)                      \
    X(avutil, av_log_set_level)                 \
    X(avutil, av_get_pix_fmt_name)              \
    X(avutil, av_pix_fmt_desc_get)              \
    X(avutil, av_dict_set)                      \
    X(avutil, av_dict_free)                     \
    X(avutil, av_buffer_ref)                    \
    X(avutil, av_buffer_unref)                  \
    X(avutil, av_frame_alloc)                   \
    X(avutil, av_frame_free)                    \
    X(avutil, av_frame_unref)                   \
    X(avutil, av_frame_get_buffer)              \
    X(avutil, av_frame_make_writable)           \
    X(avutil, av_hwdevice_ctx_alloc)            \
    X(avutil, av_hwdevice_ctx_init)             \
    X(avutil, av_hwdevice_ctx_create)           \
    X(avcodec, av_packet_alloc)                 \
    X(avcodec, av_packet_free)                  \
    X(avcodec, av_packet_unref)                 \
    X(avcodec, av_packet_rescale_ts)            \
    X(avcodec, avcodec_alloc_context3)          \
    X(avcodec, avcodec_free_context)            \
    X(avcodec, avcodec_open2)                   \
    X(avcodec, avcodec_find_decoder)            \
    X(avcodec, avcodec_find_encoder)            \
    X(avcodec, avcodec_find_encoder_by_name)    \
    X(avcodec, avcodec_get_name)                \
    X(avcodec, avcodec_get_hw_config)           \
    X(avcodec, avcodec_parameters_to_context)   \
    X(avcodec, avcodec_parameters_from_context) \
    X(avcodec, avcodec_send_packet)             \
    X(avcodec, avcodec_receive_frame)           \
    X(avcodec, avcodec_send_frame)              \
    X(avcodec, avcodec_receive_packet)          \
    X(avformat, avformat_alloc_context)         \
    X(avformat, avformat_alloc_output_context2) \
    X(avformat, avformat_free_context)          \
    X(avformat, avformat_open_input)            \
    X(avformat, avformat_close_input)           \
    X(avformat, avformat_find_stream_info)      \
    X(avformat, avformat_new_stream)            \
    X(avformat, avformat_write_header)          \
    X(avformat, av_find_best_stream)            \
    X(avformat, av_read_frame)                  \
    X(avformat, av_interleaved_write_frame)     \
    X(avformat, av_write_trailer)               \
    X(avformat, avio_open)                      \
    X(avformat, avio_closep)                    \
    X(swscale, sws_getContext)                  \
    X(swscale, sws_getCachedContext)            \
    X(swscale, sws_freeContext)                 \
    X(swscale, sws_scale)                       \
    X(swscale, sws_setColorspaceDetails)        \
    X(swscale, sws_getCoefficients)

// The functions, as pointers with FFmpeg's own signatures.
struct Library {
#define TVLM_FFMPEG_MEMBER(library, name) decltype(&::name) name = nullptr;
    TVLM_FFMPEG_FUNCTIONS(TVLM_FFMPEG_MEMBER)
#undef TVLM_FFMPEG_MEMBER
};

// The loaded library (loaded once, by the first caller; thread-safe). Throws Error naming
// the shared libraries and the Debian/Ubuntu packages that hold them where they cannot be
// loaded; a later call tries again (after the user installed them).
const Library& library();

}  // namespace tvlm::ffmpeg
