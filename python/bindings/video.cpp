// Video for Python: a file or stream decoded by FFmpeg straight into a VideoTexture's
// staging buffer (changed tiles found on the GPU, only those copied and their mips
// updated), patches sampled by Vulkan compute into host-visible memory that becomes the
// NumPy output with no copy; with CUDA, decoded by NVDEC into a CudaVideoTexture and
// sampled by the texture unit into the caller's tensor on the caller's stream; and the
// fixation schedules. texturevlm/video.py is the API.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/bindings/arrays.h"
#include "python/bindings/bindings.h"
#include "engine/error.h"
#include "engine/video_files/ffmpeg_available.h"
#include "engine/video_files/test_clip.h"
#include "engine/video/fixation_schedule.h"
#include "engine/video/video_texture.h"
#include "engine/video_files/video_decoder.h"
#include "python/bindings/vulkan_device.h"
#include "engine/sampling/vulkan_patch_sampler.h"
#ifdef TVLM_HAVE_CUDA
#include <memory>

#include "python/bindings/cuda_calls.h"
#include "cuda/cuda_handle.h"
#include "cuda_pipelines/cuda_patch_sampler.h"
#include "cuda_pipelines/cuda_video_texture.h"
#include "cuda/video/video_frames.h"
#endif

namespace tvlm::py {

namespace {

using Points = std::vector<std::pair<double, double>>;

std::vector<Fixation> fixations_of(const Points& points) {
    std::vector<Fixation> fixations;
    for (const auto& [x, y] : points) fixations.push_back({x, y});
    return fixations;
}

Points points_of(const std::vector<Fixation>& fixations) {
    Points points;
    for (const Fixation& f : fixations) points.emplace_back(f.x, f.y);
    return points;
}

// What one update did, for Python.
struct FrameChange {
    bool whole_frame = false;
    double copied_fraction = 0;
    size_t tiles_changed = 0;
    std::vector<uint32_t> changed_tiles;            // [layers, tiles_y, tiles_x], empty for the first frame
    std::vector<std::vector<uint32_t>> rectangles;  // (x, y, width, height, layer)
};

FrameChange frame_change(FrameChanges changes) {
    FrameChange change{
        changes.whole_frame, changes.copied_fraction, changes.tiles_changed, std::move(changes.changed_tiles), {}};
    for (const DirtyRegion& r : changes.regions)
        change.rectangles.push_back({r.x, r.y, r.width, r.height, r.first_layer});
    return change;
}

// Decoder options from Python: the stall timeout, and a Ctrl-C abandoning any wait for
// input. Python runs signal handlers only between bytecodes, so a decoder blocked in FFmpeg
// asks: PyErr_CheckSignals() (the GIL taken for it) runs them and leaves KeyboardInterrupt
// set, which raise_interrupt_or() raises instead of the decoder's Error.
VideoDecoderOptions python_decoder_options(double stall_timeout) {
    VideoDecoderOptions options;
    options.stall_timeout = stall_timeout;
    options.cancelled = [] {
        const nb::gil_scoped_acquire gil;
        return PyErr_CheckSignals() != 0;
    };
    return options;
}

// Runs `call`; a decoder Error that a Ctrl-C caused becomes Python's KeyboardInterrupt.
template <class F>
auto raise_interrupt_or(F&& call) -> decltype(call()) {
    try {
        return call();
    } catch (const Error&) {
        const nb::gil_scoped_acquire gil;
        if (PyErr_Occurred()) throw nb::python_error();
        throw;
    }
}

class VideoStream {
public:
    VideoStream(nb::object device, const std::string& source, const std::string& format, uint32_t threshold,
                int threads, double stall_timeout)
        : device_(std::move(device)),
          context_(nb::cast<VulkanDevice&>(device_).context()),
          decoder_(raise_interrupt_or([&] {
              VideoDecoderOptions options = python_decoder_options(stall_timeout);
              options.threads = threads;
              return VideoDecoder(source, options);
          })),
          texture_(context_, decoder_.info().width, decoder_.info().height, parse_format(format),
                   {.threshold = threshold}) {}

    const VideoInfo& info() const { return decoder_.info(); }
    std::pair<uint32_t, uint32_t> tiles() const { return {texture_.grid().tiles_x(), texture_.grid().tiles_y()}; }

    // Decodes the next frame into the texture; None at the end of the stream.
    std::optional<FrameChange> next() {
        std::span<std::byte> staging = texture_.next_frame();
        if (!raise_interrupt_or([&] {
                return decoder_.next({reinterpret_cast<uint8_t*>(staging.data()), staging.size()});
            }))
            return std::nullopt;
        return frame_change(texture_.update());
    }

    // [N, C, P, P] float32 or float16 of the current frame, in a host-visible buffer.
    NumpyArray sample(const PatchLayout& layout, uint32_t channels, bool half) {
        return sample_to_numpy(device_, context_, texture_.texture(), sampler_, layout, {channels, half});
    }

private:
    nb::object device_;  // the VulkanDevice: outlives the texture, the sampler and every output
    Context& context_;
    VideoDecoder decoder_;
    VideoTexture texture_;
    std::optional<VulkanPatchSampler> sampler_;  // kept while the layout stays
};

#ifdef TVLM_HAVE_CUDA
// NVDEC -> NV12 to RGBA8 -> a CudaVideoTexture (changed tiles decided on the GPU) -> patches
// by the texture unit into the caller's tensor. The update runs on the legacy default
// stream (after NVDEC's copies); events order it against the caller's sampling stream both
// ways on the GPU, so the host waits only for what changed (the frame's report).
class CudaVideoStream {
public:
    CudaVideoStream(int device, const std::string& source, uint32_t threshold, double stall_timeout) : device_(device) {
        const DeviceGuard guard(device);
        raise_interrupt_or([&] { state_ = std::make_unique<State>(device, source, threshold, stall_timeout); });
    }
    CudaVideoStream(const CudaVideoStream&) = delete;
    CudaVideoStream& operator=(const CudaVideoStream&) = delete;
    ~CudaVideoStream() {
        const DeviceGuard guard(device_);
        state_.reset();
    }

    const VideoInfo& info() const { return state_->decoder.info(); }
    std::pair<uint32_t, uint32_t> tiles() const {
        return {state_->texture.grid().tiles_x(), state_->texture.grid().tiles_y()};
    }

    std::optional<FrameChange> next() {
        const DeviceGuard guard(device_);
        State& s = *state_;
        DeviceFrame frame;
        if (!raise_interrupt_or([&] { return s.decoder.next(frame); })) return std::nullopt;
        nv12_to_rgba8(frame, s.texture.frame(), s.texture.frame_pitch(), nullptr);
        // The texture is rewritten only after the last sampling of the previous frame.
        TVLM_CUDA_CHECK(cudaStreamWaitEvent(nullptr, s.sampled.get(), 0));
        s.texture.update(nullptr);
        TVLM_CUDA_CHECK(cudaEventRecord(s.updated.get(), nullptr));
        return frame_change(s.texture.changes());
    }

    // The current frame's patches of `sampler`'s layout into `out` ([N, C, P, P] float32 or
    // float16 in CUDA memory, `out_bytes` long) on `stream`; no host wait.
    void sample(const CudaPatchSampler& sampler, uint32_t channels, bool half, uintptr_t out, size_t out_bytes,
                uintptr_t stream) {
        const DeviceGuard guard(device_);
        State& s = *state_;
        const PatchTarget target{reinterpret_cast<void*>(out), out_bytes, {channels, half}};
        const TextureDesc& texture = s.texture.mipmaps().desc;
        sampler.check(texture, target);  // before the stream waits on anything
        TVLM_CUDA_CHECK(cudaStreamWaitEvent(stream_of(stream), s.updated.get(), 0));
        sampler.sample(texture, (sampler.gradients() ? s.anisotropic : s.trilinear).get(), target, stream_of(stream));
        TVLM_CUDA_CHECK(cudaEventRecord(s.sampled.get(), stream_of(stream)));
    }

private:
    struct State {  // made and destroyed with the stream's device current
        VideoDecoder decoder;
        CudaVideoTexture texture;
        TextureObject trilinear, anisotropic;
        CudaEvent updated = make_event(), sampled = make_event();
        State(int device, const std::string& source, uint32_t threshold, double stall_timeout)
            : decoder(source,
                      [&] {
                          VideoDecoderOptions options = python_decoder_options(stall_timeout);
                          options.decode = VideoDecode::nvdec;
                          options.cuda_device = device;
                          return options;
                      }()),
              texture(decoder.info().width, decoder.info().height, {.threshold = threshold}),
              trilinear(texture.mipmaps().make_texture_object(CudaSamplerDesc::trilinear())),
              anisotropic(texture.mipmaps().make_texture_object(CudaSamplerDesc::anisotropic())) {
            TVLM_CUDA_CHECK(cudaEventRecord(sampled.get(), nullptr));  // nothing sampled yet
        }
    };
    int device_;
    std::unique_ptr<State> state_;
};
#endif

// The decoded video's description, the same on every stream class.
template <class Stream>
void def_video_info(nb::class_<Stream>& c) {
    c.def_prop_ro("width", [](const Stream& v) { return v.info().width; })
        .def_prop_ro("height", [](const Stream& v) { return v.info().height; })
        .def_prop_ro("frames_per_second", [](const Stream& v) { return v.info().frames_per_second; })
        .def_prop_ro("frames", [](const Stream& v) { return v.info().frames; })
        .def_prop_ro("codec", [](const Stream& v) { return v.info().codec; })
        .def_prop_ro("decoder", [](const Stream& v) { return v.info().decoder; });
}

}  // namespace

void bind_video(nb::module_& m) {
    using Release = nb::call_guard<nb::gil_scoped_release>;
    m.def(
        "video_built", [] { return true; }, "Whether this build reads video files (FFmpeg was found).");
    m.def("video_unavailable", &ffmpeg::unavailable_reason,
          "'' where FFmpeg's libraries load (they are loaded at run time), else why not and what to install.");
    m.def(
        "write_test_clip",
        [](const std::string& path, uint32_t width, uint32_t height, uint32_t frames, uint32_t cut,
           const std::string& codec) {
            write_test_clip(path, {width, height, frames, cut}, codec);
        },
        nb::arg("path"), nb::arg("width"), nb::arg("height"), nb::arg("frames"), nb::arg("cut"),
        nb::arg("codec") = "ffv1", Release());
    m.def(
        "test_clip_frame",
        [](uint32_t width, uint32_t height, uint32_t frames, uint32_t cut, uint32_t index) {
            return owned_array(test_clip_frame({width, height, frames, cut}, index), {height, width, 4},
                               nb::dtype<uint8_t>());
        },
        nb::arg("width"), nb::arg("height"), nb::arg("frames"), nb::arg("cut"), nb::arg("index"));
    nb::class_<FrameChange>(m, "FrameChange", "What one video frame changed in the texture.")
        .def_ro("whole_frame", &FrameChange::whole_frame)
        .def_ro("copied_fraction", &FrameChange::copied_fraction)
        .def_ro("tiles_changed", &FrameChange::tiles_changed)
        .def_prop_ro(
            "changed_tiles",
            [](const FrameChange& c) {
                return owned_array(c.changed_tiles, {c.changed_tiles.size()}, nb::dtype<uint32_t>());
            },
            nb::rv_policy::move)
        .def_ro("rectangles", &FrameChange::rectangles);
    auto video_stream = nb::class_<VideoStream>(m, "VideoStream", "A video decoded into a texture that follows it.");
    def_video_info(video_stream);
    video_stream
        .def(nb::init<nb::object, const std::string&, const std::string&, uint32_t, int, double>(), nb::arg("device"),
             nb::arg("source"), nb::arg("format"), nb::arg("threshold"), nb::arg("threads"), nb::arg("stall_timeout"))
        .def_prop_ro("tiles", &VideoStream::tiles)
        .def("next", &VideoStream::next, Release())
        .def("sample", &VideoStream::sample, nb::arg("layout"), nb::arg("channels"), nb::arg("half"));
#ifdef TVLM_HAVE_CUDA
    auto cuda_video_stream = nb::class_<CudaVideoStream>(
        m, "CudaVideoStream", "A video decoded by NVDEC into a CUDA texture that follows it.");
    def_video_info(cuda_video_stream);
    cuda_video_stream
        .def(nb::init<int, const std::string&, uint32_t, double>(), nb::arg("device"), nb::arg("source"),
             nb::arg("threshold"), nb::arg("stall_timeout"), Release())
        .def_prop_ro("tiles", &CudaVideoStream::tiles)
        .def("next", &CudaVideoStream::next, Release())
        .def("sample", &CudaVideoStream::sample, nb::arg("sampler"), nb::arg("channels"), nb::arg("half"),
             nb::arg("out"), nb::arg("out_bytes"), nb::arg("stream"));
#endif
    nb::class_<FixationSchedule>(m, "FixationSchedule",
                                 "Where to look in each frame (engine/video/fixation_schedule.h).")
        .def_static("fixed", [](const Points& p) { return FixationSchedule::fixed(fixations_of(p)); })
        .def_static("timeline",
                    [](const std::vector<std::pair<double, Points>>& entries) {
                        std::vector<TimedFixations> keyframes;
                        for (const auto& [time, points] : entries) keyframes.push_back({time, fixations_of(points)});
                        return FixationSchedule::timeline(std::move(keyframes));
                    })
        .def_static(
            "following",
            [](double per_second, uint32_t count, double separation, const Points& start) {
                return FixationSchedule::following(per_second, count, separation, fixations_of(start));
            },
            nb::arg("per_second"), nb::arg("count"), nb::arg("separation"), nb::arg("start"))
        .def_prop_ro("needs_saliency", &FixationSchedule::needs_saliency)
        .def_prop_ro("moved", &FixationSchedule::moved)
        .def(
            "at",
            [](FixationSchedule& s, double time,
               std::optional<nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>> saliency) {
                if (!saliency) return points_of(s.at(time));
                const SaliencyMap map{
                    uint32_t(saliency->shape(1)), uint32_t(saliency->shape(0)), {saliency->data(), saliency->size()}};
                return points_of(s.at(time, &map));
            },
            nb::arg("time"), nb::arg("saliency").none() = nb::none());
}

}  // namespace tvlm::py
