// tvlm bench video-file: a real H.264 file (the test clip at 1080p and 4K, made here with
// libx264: the test chart with a square moving over it, mostly static) decoded and turned
// into 273 foveated patches per frame (a keyframe every 250 frames). Wall time per frame (each run decodes the whole
// file from its start; median of 3 runs): decoding alone on the CPU and on NVDEC, then NVDEC
// with the engine's full pipeline (NV12 -> RGBA8, copy, whole box chain, patches) and its
// partial one (changed tiles found, copied and their mips updated, all decided on the GPU:
// CudaVideoTexture); and the engine alone
// on frames already decoded into CUDA memory, full and partial. Floors: the engine's bytes
// at the device copy bandwidth (full: frame read, level 0 and mips written, patches; partial:
// the frame and level 0 read to find the changes).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "apps/bench/bench_gpu.h"
#include "apps/bench/bench_timing.h"
#include "cuda_pipelines/cuda_array_texture.h"
#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/cuda_check.h"
#include "cuda_pipelines/cuda_patch_sampler.h"
#include "cuda_pipelines/cuda_video_texture.h"
#include "cuda/device_buffer.h"
#include "engine/error.h"
#include "engine/sampling/patch_layouts.h"
#include "engine/video_files/test_clip.h"
#include "engine/video_files/video_decoder.h"
#include "cuda/video/video_frames.h"

namespace tvlm {

namespace {

using Clock = std::chrono::steady_clock;

// Wall time per frame of `run()` (which returns the frames it did), median and min of 3.
Timing per_frame(const std::function<uint32_t()>& run) {
    std::vector<double> ms;
    uint32_t frames = 1;
    for (int r = 0; r < 3; ++r) {
        const auto start = Clock::now();
        frames = std::max(1u, run());
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    return per_launch(ms, int(frames));
}

struct Clip {
    uint32_t width, height, frames;
};

}  // namespace

std::vector<Row> bench_video_file(BenchGpu& gpu) {
    std::vector<Row> rows;
    const BenchMachine& m = gpu.machine;
    // NVDEC's frames come on the legacy default stream; the engine's work follows it there.
    const cudaStream_t stream = nullptr;
    for (const Clip& c : {Clip{1920, 1080, 120}, Clip{3840, 2160, 60}}) {
        // A keyframe every 250 frames (x264's default): mostly static frames between them.
        const TestClip clip{.width = c.width,
                            .height = c.height,
                            .frames = c.frames,
                            .cut = c.frames + 1,
                            .square = c.height / 8,
                            .keyframe_interval = 250};
        const std::string path =
            (std::filesystem::temp_directory_path() / ("tvlm_bench_" + std::to_string(c.height) + "p.mp4")).string();
        write_test_clip(path, clip, "libx264");
        const std::string job = std::to_string(c.width) + "x" + std::to_string(c.height) + " H.264, " +
                                std::to_string(c.frames) + " frames -> 273 patches";
        const double frame_bytes = double(c.width) * c.height * 4;
        const PatchLayout layout = foveated_layout(c.width, c.height, {}).layout;
        const PatchOutput output{.channels = 3};
        const CudaPatchSampler sampler(layout, output);
        DeviceBuffer<unsigned char> out(output.bytes(layout));
        const double full_floor = (frame_bytes * (1.0 + 4.0 / 3.0) + double(out.bytes())) / m.copy_bandwidth * 1e6;
        const double partial_floor = (2.0 * frame_bytes + double(out.bytes())) / m.copy_bandwidth * 1e6;
        const auto add = [&](const std::string& method, Timing t, double floor_us) {
            rows.push_back({job, method, t.median_us, t.min_us, floor_us});
        };

        std::vector<uint8_t> rgba(static_cast<size_t>(frame_bytes));
        add("CPU decode (FFmpeg, all cores) to RGBA8", per_frame([&] {
                VideoDecoder decoder(path);
                uint32_t n = 0;
                while (decoder.next(rgba)) ++n;
                return n;
            }),
            0);
        std::optional<VideoDecoder> probe;
        try {
            probe.emplace(path, VideoDecoderOptions{.decode = VideoDecode::nvdec});
        } catch (const Error& e) {
            std::printf("video-file: NVDEC rows left out: %s\n", e.what());
            continue;
        }
        probe.reset();
        DeviceBuffer<uint8_t> converted(static_cast<size_t>(frame_bytes));
        const auto convert = [&](const DeviceFrame& f, uint8_t* to) {
            nv12_to_rgba8(f, to, size_t{c.width} * 4, stream);
        };
        // Decodes the file on NVDEC, calling `each(frame)` per frame; the host waits at the end.
        const auto nvdec_run = [&](const std::function<void(const DeviceFrame&)>& each) {
            return [&, each] {
                VideoDecoder decoder(path, VideoDecoderOptions{.decode = VideoDecode::nvdec});
                DeviceFrame f;
                uint32_t n = 0;
                while (decoder.next(f)) {
                    each(f);
                    ++n;
                }
                TVLM_CUDA_CHECK(cudaDeviceSynchronize());
                return n;
            };
        };
        add("NVDEC decode (frames stay in CUDA memory)", per_frame(nvdec_run([](const DeviceFrame&) {})), 0);
        add("NVDEC decode + NV12 -> RGBA8",
            per_frame(nvdec_run([&](const DeviceFrame& f) { convert(f, converted.data()); })), 0);

        const CudaArrayTexture texture = CudaArrayTexture::create(
            TextureDesc::sampled_2d(c.width, c.height, Format::rgba8_unorm));
        const CudaBoxMips mips(texture);
        const TextureObject object = texture.mipmaps().make_texture_object(sampler.sampler_desc());
        const auto full_engine = [&](const uint8_t* frame) {
            mips.generate_from(frame, size_t{c.width} * 4, stream);
            sampler.sample(texture, object.get(), out.data(), out.bytes(), stream);
        };
        add("NVDEC + full pipeline (convert, whole box chain, patches)", per_frame(nvdec_run([&](const DeviceFrame& f) {
                convert(f, converted.data());
                full_engine(converted.data());
            })),
            full_floor);
        std::optional<CudaVideoTexture> video;
        std::optional<TextureObject> video_object;
        const auto partial_engine = [&] {
            video->update(stream);
            sampler.sample(video->mipmaps(), video_object->get(), out.data(), out.bytes(), stream);
        };
        add("NVDEC + partial pipeline (convert, changed tiles, their copies and mips, patches)", per_frame([&] {
                video.emplace(c.width, c.height);  // each run starts from an empty texture
                video_object.emplace(video->mipmaps().make_texture_object(sampler.sampler_desc()));
                return nvdec_run([&](const DeviceFrame& f) {
                    convert(f, video->frame());
                    partial_engine();
                })();
            }),
            partial_floor);
        {  // What changed, frame by frame (untimed: changes() waits for each frame's flags).
            video.emplace(c.width, c.height);
            size_t tiles = 0, changed = 0;
            nvdec_run([&](const DeviceFrame& f) {
                convert(f, video->frame());
                video->update(stream);
                const FrameChanges changes = video->changes();
                if (changes.whole_frame) return;
                changed += changes.tiles_changed;
                tiles += changes.changed_tiles.size();
            })();
            std::printf("video-file: %ux%u: %.1f%% of tiles changed per frame after the first\n", c.width, c.height,
                        100.0 * double(changed) / double(std::max<size_t>(1, tiles)));
        }

        // The engine alone: frames decoded beforehand into CUDA memory (a ring of 8).
        std::vector<DeviceBuffer<uint8_t>> decoded;
        {
            VideoDecoder decoder(path, VideoDecoderOptions{.decode = VideoDecode::nvdec});
            DeviceFrame f;
            while (decoded.size() < 8 && decoder.next(f)) {
                decoded.emplace_back(size_t(frame_bytes));
                convert(f, decoded.back().data());
            }
            TVLM_CUDA_CHECK(cudaDeviceSynchronize());
        }
        const int frames = int(decoded.size());
        const auto sync = [&] { TVLM_CUDA_CHECK(cudaStreamSynchronize(stream)); };
        add("engine alone, full: whole box chain + patches (frames in CUDA memory)",
            time_frames([&](uint64_t i) { full_engine(decoded[i % decoded.size()].data()); }, sync, frames, 7, 2),
            full_floor);
        video.emplace(c.width, c.height);
        video_object.emplace(video->mipmaps().make_texture_object(sampler.sampler_desc()));
        add("engine alone, partial: changed tiles, copies, mip updates + patches",
            time_frames(
                [&](uint64_t i) {
                    TVLM_CUDA_CHECK(cudaMemcpyAsync(video->frame(), decoded[i % decoded.size()].data(),
                                                    size_t(frame_bytes), cudaMemcpyDeviceToDevice, stream));
                    partial_engine();
                },
                sync, frames, 7, 2),
            partial_floor);
        // Each step of the partial update, GPU time (frame 1 against frame 0 held in level 0).
        {
            const std::string steps = job + ": steps, GPU time";
            const auto add_step = [&](const std::string& method, Timing t, double floor_us) {
                rows.push_back({steps, method, t.median_us, t.min_us, floor_us});
            };
            const cudaStream_t s = gpu.stream;
            mips.generate_from(decoded[0].data(), size_t{c.width} * 4, s);
            const SurfaceObject level0 = texture.mipmaps().make_surface(0);
            DeviceBuffer<uint32_t> flags(size_t((c.width + 31) / 32) * ((c.height + 31) / 32));
            const uint8_t* next = decoded[1].data();
            add_step("find changed tiles (frame and level 0 read)",
                     time_cuda(s,
                               [&] {
                                   find_changed_tiles(next, size_t{c.width} * 4, level0.get(), c.width, c.height, 0,
                                                      flags.data(), s);
                               }),
                     2.0 * frame_bytes / m.copy_bandwidth * 1e6);
            // Found and copied in one kernel (what CudaVideoTexture runs): frames 1 and 0 by
            // turns, so that every launch finds the same tiles changed and writes them.
            DeviceBuffer<uint32_t> scratch_flags(flags.size());
            uint32_t launches = 0;
            add_step("find and copy changed tiles (update_changed_tiles)",
                     time_cuda(s,
                               [&] {
                                   update_changed_tiles(launches++ % 2 ? decoded[0].data() : next, size_t{c.width} * 4,
                                                        level0.get(), c.width, c.height, 0, scratch_flags.data(), s);
                               }),
                     2.0 * frame_bytes / m.copy_bandwidth * 1e6);
            add_step("mips of the changed tiles (update_changed)",
                     time_cuda(s, [&] { mips.update_changed(flags.data(), s); }), 0);
            add_step("whole box chain (generate)", time_cuda(s, [&] { mips.generate(s); }),
                     frame_bytes * (1.0 + 2.0 / 3.0) / m.copy_bandwidth * 1e6);
            add_step("273 patches",
                     time_cuda(s, [&] { sampler.sample(texture, object.get(), out.data(), out.bytes(), s); }),
                     double(out.bytes()) / m.copy_bandwidth * 1e6);
        }
        std::filesystem::remove(path);
    }
    return rows;
}

}  // namespace tvlm
