// Video for Python: a file or stream decoded by FFmpeg straight into a VideoTexture's
// staging buffer (changed tiles found on the GPU, only those copied and their mips
// updated), patches sampled by Vulkan compute into host-visible memory that becomes the
// NumPy output with no copy; and the fixation schedules. texturevlm/video.py is the API.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "error.h"
#include "test_clip.h"
#include "video/fixation_schedule.h"
#include "video/video_texture.h"
#include "video_decoder.h"
#include "vulkan_device.h"
#include "vulkan_patch_sampler.h"

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
    std::vector<uint32_t> changed_tiles;  // [layers, tiles_y, tiles_x], empty for the first frame
    std::vector<std::vector<uint32_t>> rectangles;  // (x, y, width, height, layer)
};

class VideoStream {
public:
    VideoStream(nb::object device, const std::string& source, const std::string& format, uint32_t threshold,
                int threads)
        : device_(std::move(device)),
          context_(nb::cast<VulkanDevice&>(device_).context()),
          decoder_(source, threads),
          texture_(context_, decoder_.info().width, decoder_.info().height, parse_format(format),
                   {.threshold = threshold}) {}

    const VideoInfo& info() const { return decoder_.info(); }
    std::pair<uint32_t, uint32_t> tiles() const { return {texture_.grid().tiles_x(), texture_.grid().tiles_y()}; }

    // Decodes the next frame into the texture; None at the end of the stream.
    std::optional<FrameChange> next() {
        std::span<std::byte> staging = texture_.next_frame();
        if (!decoder_.next({reinterpret_cast<uint8_t*>(staging.data()), staging.size()})) return std::nullopt;
        FrameUpdate update = texture_.update();
        FrameChange change{update.whole_frame, update.copied_fraction, update.tiles_changed,
                           std::move(update.changed_tiles), {}};
        for (const DirtyRegion& r : update.regions) change.rectangles.push_back({r.x, r.y, r.width, r.height, r.first_layer});
        return change;
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

}  // namespace

void bind_video(nb::module_& m) {
    using Release = nb::call_guard<nb::gil_scoped_release>;
    m.def("video_built", [] { return true; }, "Whether this build reads video files (FFmpeg was found).");
    m.def("write_test_clip",
          [](const std::string& path, uint32_t width, uint32_t height, uint32_t frames, uint32_t cut) {
              write_test_clip(path, {width, height, frames, cut});
          },
          nb::arg("path"), nb::arg("width"), nb::arg("height"), nb::arg("frames"), nb::arg("cut"), Release());
    m.def("test_clip_frame",
          [](uint32_t width, uint32_t height, uint32_t frames, uint32_t cut, uint32_t index) {
              return owned_array(test_clip_frame({width, height, frames, cut}, index), {height, width, 4},
                                 nb::dtype<uint8_t>());
          },
          nb::arg("width"), nb::arg("height"), nb::arg("frames"), nb::arg("cut"), nb::arg("index"));
    nb::class_<FrameChange>(m, "FrameChange", "What one video frame changed in the texture.")
        .def_ro("whole_frame", &FrameChange::whole_frame)
        .def_ro("copied_fraction", &FrameChange::copied_fraction)
        .def_ro("tiles_changed", &FrameChange::tiles_changed)
        .def_prop_ro("changed_tiles",
                     [](const FrameChange& c) { return owned_array(c.changed_tiles, {c.changed_tiles.size()},
                                                                  nb::dtype<uint32_t>()); },
                     nb::rv_policy::move)
        .def_ro("rectangles", &FrameChange::rectangles);
    nb::class_<VideoStream>(m, "VideoStream", "A video decoded into a texture that follows it.")
        .def(nb::init<nb::object, const std::string&, const std::string&, uint32_t, int>(), nb::arg("device"),
             nb::arg("source"), nb::arg("format"), nb::arg("threshold"), nb::arg("threads"))
        .def_prop_ro("width", [](const VideoStream& v) { return v.info().width; })
        .def_prop_ro("height", [](const VideoStream& v) { return v.info().height; })
        .def_prop_ro("frames_per_second", [](const VideoStream& v) { return v.info().frames_per_second; })
        .def_prop_ro("frames", [](const VideoStream& v) { return v.info().frames; })
        .def_prop_ro("codec", [](const VideoStream& v) { return v.info().codec; })
        .def_prop_ro("tiles", &VideoStream::tiles)
        .def("next", &VideoStream::next, Release())
        .def("sample", &VideoStream::sample, nb::arg("layout"), nb::arg("channels"), nb::arg("half"));
    nb::class_<FixationSchedule>(m, "FixationSchedule", "Where to look in each frame (engine/video/fixation_schedule.h).")
        .def_static("fixed", [](const Points& p) { return FixationSchedule::fixed(fixations_of(p)); })
        .def_static("timeline",
                    [](const std::vector<std::pair<double, Points>>& entries) {
                        std::vector<TimedFixations> keyframes;
                        for (const auto& [time, points] : entries) keyframes.push_back({time, fixations_of(points)});
                        return FixationSchedule::timeline(std::move(keyframes));
                    })
        .def_static("following",
                    [](double per_second, uint32_t count, double separation, const Points& start) {
                        return FixationSchedule::following(per_second, count, separation, fixations_of(start));
                    },
                    nb::arg("per_second"), nb::arg("count"), nb::arg("separation"), nb::arg("start"))
        .def_prop_ro("needs_saliency", &FixationSchedule::needs_saliency)
        .def_prop_ro("moved", &FixationSchedule::moved)
        .def("at",
             [](FixationSchedule& s, double time,
                std::optional<nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>> saliency) {
                 if (!saliency) return points_of(s.at(time));
                 const SaliencyMap map{uint32_t(saliency->shape(1)), uint32_t(saliency->shape(0)),
                                       {saliency->data(), saliency->size()}};
                 return points_of(s.at(time, &map));
             },
             nb::arg("time"), nb::arg("saliency").none() = nb::none());
}

}  // namespace tvlm::py
