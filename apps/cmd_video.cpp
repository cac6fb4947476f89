// tvlm video: a video file or stream in, foveated patch tensors per frame out. Frames are
// decoded by NVDEC into a CudaVideoTexture, or on the CPU (FFmpeg) into a VideoTexture's
// staging buffer (video_paths.h); either finds the changed tiles on the GPU and updates only
// those and their mips; patches are sampled where the fixation schedule says to look.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/args.h"
#include "apps/commands.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "apps/json.h"
#include "apps/output_files.h"
#include "engine/sampling/patch_layouts.h"
#include "apps/sample_viz.h"
#include "engine/video/fixation_schedule.h"
#include "apps/video_paths.h"
#include "engine/video_files/test_clip.h"
#include "engine/video_files/video_decoder.h"
#include "engine/video_files/video_encoder.h"

namespace tvlm {

namespace {

constexpr const char* kHelp =
    "usage: tvlm video [FILE] [--fixation x,y[;x,y...] | --fixations FILE | --follow-changes RATE]\n"
    "                  [--budget N] [--patch P] [--every K] [--frames N] [--threshold T] [--timeout S]\n"
    "                  [--out patches.npy | DIR/] [--meta meta.json] [--viz-video out.mp4]\n"
    "Decodes FILE (any file or stream FFmpeg reads; without FILE, the embedded test clip:\n"
    "the test chart with a moving square and a scene cut, 640x432, 48 frames), keeps a texture of the current frame\n"
    "updated where the frame changed (tiles compared on the GPU), and samples foveated P x P\n"
    "patches from every K-th frame: one NumPy float32 array [F, N, C, P, P] (N = the budget;\n"
    "unused slots are zeros), or with DIR/ one file per frame (frame_000000.npy, ...).\n"
    "  --fixation        fixed fixations, normalized x,y in [0,1] (default 0.5,0.5)\n"
    "  --fixations FILE  a timeline: lines 'SECONDS x,y[;x,y...]', each held until the next\n"
    "  --follow-changes RATE  move the fixation at most RATE times a second to where the\n"
    "                    frame changed most since the last move (e.g. 4)\n"
    "  --budget          most patches per frame (default 273);  --patch  P (default 16)\n"
    "  --every K         sample every K-th frame (default 1); --frames N  stop after N frames\n"
    "  --threshold T     a channel differing by at most T (0-255) counts as unchanged (default 0:\n"
    "                    the texture equals every frame exactly)\n"
    "  --channels        3 (default) or 4;  --format rgba8 (default) or rgba8_srgb\n"
    "  --meta FILE       per sampled frame: time, fixations, what changed; the layouts used\n"
    "                    (default meta.json)\n"
    "  --viz-video FILE  the sampled frames with patch outlines and fixations, encoded by FFmpeg\n"
    "  --timeout S       give up on a source that sends nothing for S seconds (default 30; 0: wait\n"
    "                    for ever): a stream whose server stalls\n"
    "  --decoder         auto (default: NVDEC and CUDA where they run, else the CPU decoder and\n"
    "                    Vulkan compute), cpu or nvdec\n"
    "  --device          Vulkan device: index, name substring or UUID (see tvlm info)\n";

std::vector<TimedFixations> read_timeline(const std::string& path) {
    std::ifstream file(path);
    if (!file) throw Error("--fixations: cannot open '" + path + "'");
    std::vector<TimedFixations> keyframes;
    std::string line;
    for (int number = 1; std::getline(file, line); ++number) {
        if (line.find_first_not_of(" \t\r") == std::string::npos || line[line.find_first_not_of(" \t")] == '#')
            continue;
        std::istringstream fields(line);
        std::string time, points;
        if (!(fields >> time >> points))
            throw Error("--fixations '" + path + "' line " + std::to_string(number) +
                        ": expected 'SECONDS x,y[;x,y...]'");
        keyframes.push_back({parse_number(time, "--fixations time"), parse_fixations(points, "--fixations")});
    }
    return keyframes;
}

FixationSchedule make_schedule(const Args& args) {
    const int given = bool(args.option("fixation")) + bool(args.option("fixations")) +
                      bool(args.option("follow-changes"));
    if (given > 1) throw Error("choose one of --fixation, --fixations and --follow-changes");
    if (args.option("fixations")) return FixationSchedule::timeline(read_timeline(*args.option("fixations")));
    if (args.option("follow-changes"))
        return FixationSchedule::following(parse_number(*args.option("follow-changes"), "--follow-changes"));
    return FixationSchedule::fixed(args.option("fixation") ? parse_fixations(*args.option("fixation"))
                                                           : std::vector<Fixation>{Fixation{}});
}

// Changed tiles of layer 0 as saliency, each cell the count of changed tiles around it (3x3):
// the middle of a moving object outweighs its edges.
std::vector<float> change_saliency(const FrameChanges& update, const TileGrid& grid) {
    const uint32_t w = grid.tiles_x(), h = grid.tiles_y();
    std::vector<float> map(size_t{w} * h, 0.0f);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x)
            for (uint32_t v = y ? y - 1 : 0; v <= std::min(h - 1, y + 1); ++v)
                for (uint32_t u = x ? x - 1 : 0; u <= std::min(w - 1, x + 1); ++u)
                    map[size_t{y} * w + x] += float(update.changed_tiles[size_t{v} * w + u]);
    return map;
}

std::string fixations_json(const std::vector<Fixation>& fixations) {
    std::string s = "[";
    char buf[64];
    for (const Fixation& f : fixations) {
        std::snprintf(buf, sizeof buf, "%s[%.6g, %.6g]", s.size() > 1 ? ", " : "", f.x, f.y);
        s += buf;
    }
    return s + "]";
}

std::string layout_json(const PatchLayout& layout) {
    const std::vector<float> rows = patch_metadata(layout);
    std::string s = "[";
    char buf[160];
    for (size_t n = 0; n < layout.patches.size(); ++n) {
        std::snprintf(buf, sizeof buf, "%s[%.9g, %.9g, %.9g, %.9g, %.9g]", n ? ", " : "", double(rows[n * 5]),
                      double(rows[n * 5 + 1]), double(rows[n * 5 + 2]), double(rows[n * 5 + 3]),
                      double(rows[n * 5 + 4]));
        s += buf;
    }
    return s + "]";
}

bool is_frame_output(const std::string& name) {
    return name.size() == 16 && name.starts_with("frame_") && name.ends_with(".npy");
}

std::string frame_file_name(size_t index) {
    char name[32];
    std::snprintf(name, sizeof name, "frame_%06zu.npy", index);
    return name;
}

}  // namespace

int run_video(int argc, char** argv) {
    const Args args(argc, argv, 2,
                    {"fixation", "fixations", "follow-changes", "budget", "patch", "every", "frames", "threshold",
                     "out", "meta", "viz-video", "channels", "format", "device", "decoder", "timeout"},
                    {"validation", "help"});
    if (args.flag("help")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    if (args.positionals().size() > 1) throw Error("tvlm video takes at most one FILE (see --help)");
    const bool clip = args.positionals().empty();
    const std::string source = clip ? "embedded test clip" : args.positionals()[0];
    const Format format = parse_format(args.option_or("format", "rgba8"));
    const uint32_t budget = args.uint_option("budget").value_or(273), patch = args.uint_option("patch").value_or(16);
    const uint32_t every = args.uint_option("every").value_or(1), channels = args.uint_option("channels").value_or(3);
    const std::optional<uint32_t> max_frames = args.uint_option("frames");
    if (every == 0) throw Error("--every must be at least 1");
    if (max_frames && *max_frames == 0) throw Error("--frames must be at least 1");
    if (channels != 3 && channels != 4) throw Error("--channels must be 3 or 4, not " + std::to_string(channels));
    FixationSchedule schedule = make_schedule(args);

    // Outputs are checked first, written under temporary names, and land together at the end.
    OutputFiles outputs;
    const std::string out = args.option_or("out", "patches.npy"), meta = args.option_or("meta", "meta.json");
    const bool per_frame = out.ends_with("/") || std::filesystem::is_directory(out);
    // The folder's own name, without the trailing slash that asked for it (a rename onto
    // "dir/" fails once the folder exists).
    const std::string out_folder = out.size() > 1 && out.ends_with("/") ? out.substr(0, out.size() - 1) : out;
    const std::string out_target = per_frame ? outputs.folder(out_folder, "--out", is_frame_output)
                                             : outputs.file(out, "--out");
    const std::string meta_file = outputs.file(meta, "--meta");
    const std::optional<std::string> viz = args.option("viz-video");
    const std::string viz_file = viz ? outputs.file(*viz, "--viz-video") : "";

    // The embedded clip is written to a temporary file (lossless FFV1), opened, and removed
    // at once (the decoder keeps it open).
    const double timeout = args.option("timeout") ? parse_number(*args.option("timeout"), "--timeout")
                                                  : VideoDecoderOptions::kDefaultStallTimeout;
    if (!(timeout >= 0)) throw Error("--timeout is 0 (wait for ever) or more seconds, not " + *args.option("timeout"));
    const std::string decoder_name = args.option_or("decoder", "auto");
    if (decoder_name != "auto" && decoder_name != "cpu" && decoder_name != "nvdec")
        throw Error("unknown decoder '" + decoder_name + "': expected auto, cpu or nvdec");
    const ChangeDetection detection{.threshold = args.uint_option("threshold").value_or(0)};
    ContextDesc desc;
    desc.device = DeviceSelector::parse(args.option_or("device", ""));
    desc.validation = desc.validation || args.flag("validation");
    Context context(desc);
    std::unique_ptr<VideoPath> path;
    if (!clip && decoder_name != "cpu") {
        try {
            if (format != Format::rgba8_unorm)
                throw Error("NVDEC frames become rgba8 textures, not " + std::string(format_info(format).name));
            path = nvdec_video_path(context, source, detection, timeout);
        } catch (const Error& e) {
            if (decoder_name == "nvdec") throw;
            std::fprintf(stderr, "note: NVDEC not used (%s): decoding on the CPU\n", e.what());
        }
    }
    if (!path) {
        if (clip) {
            const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                               ("tvlm-test-clip-" + std::to_string(::getpid()) + ".mkv");
            try {
                write_test_clip(file.string());
                path = vulkan_video_path(context, VideoDecoder(file.string()), format, detection);
            } catch (...) {
                std::filesystem::remove(file);
                throw;
            }
            std::filesystem::remove(file);
            if (decoder_name == "nvdec")
                throw Error("the embedded clip is FFV1, which NVDEC cannot decode: give a FILE");
        } else {
            path = vulkan_video_path(context, VideoDecoder(source, VideoDecoderOptions{.stall_timeout = timeout}),
                                     format, detection);
        }
    }
    const VideoInfo& info = path->info();
    const TileGrid& grid = path->grid();
    const double fps = info.frames_per_second > 0 ? info.frames_per_second : 25.0;
    // Checks the budget and patch size against the frame before any frame is decoded.
    FoveatedParams params{.budget = budget, .patch_size = patch};
    foveated_layout(info.width, info.height, params);
    std::optional<VideoEncoder> encoder;
    if (viz && (info.width < 2 || info.height < 2))
        throw Error("--viz-video '" + *viz + "': a " + std::to_string(info.width) + "x" + std::to_string(info.height) +
                    " video cannot be drawn into a video file (its encoders need sides of 2 or more); leave "
                    "--viz-video out");
    if (viz)
        encoder.emplace(
            viz_file, info.width & ~1u, info.height & ~1u,
            VideoEncoding{.frames_per_second = std::max(1, int(fps / every + 0.5)), .container_from = *viz});

    PatchLayout layout;
    std::vector<std::string> layouts;
    std::vector<float> all_values;
    std::string frames_json;
    size_t decoded = 0, sampled = 0;
    double copied = 0;
    std::vector<uint8_t> viz_frame;
    const auto start = std::chrono::steady_clock::now();
    auto last_report = start;
    for (;;) {
        if (max_frames && decoded == *max_frames) break;
        const std::optional<FrameChanges> update = path->next(encoder && decoded % every == 0 ? &viz_frame : nullptr);
        if (!update) break;
        const double time = double(decoded) / fps;
        copied += update->copied_fraction;
        std::vector<float> saliency;
        SaliencyMap map;
        if (schedule.needs_saliency() && !update->whole_frame) {
            saliency = change_saliency(*update, grid);
            map = {grid.tiles_x(), grid.tiles_y(), saliency};
        }
        const std::vector<Fixation>& fixations = schedule.at(time, map.values.empty() ? nullptr : &map);
        if (schedule.moved()) {
            params.fixations = fixations;
            const PatchLayout one = foveated_layout(info.width, info.height, params).layout;
            layout = batch_layouts(std::vector<PatchLayout>{one}, budget);
            layouts.push_back(layout_json(layout));
        }
        if (decoded % every == 0) {
            std::vector<float> values = path->sample(layout, channels);
            if (per_frame) {
                write_npy((std::filesystem::path(out_target) / frame_file_name(sampled)).string(),
                          {size_t{budget}, channels, patch, patch}, values);
            } else {
                all_values.insert(all_values.end(), values.begin(), values.end());
            }
            char line[256];
            std::snprintf(line, sizeof line,
                          "%s\n    {\"frame\": %zu, \"time\": %.6f, \"layout\": %zu, \"whole_frame\": %s, "
                          "\"changed_tiles\": %zu, \"rectangles\": %zu, \"copied_fraction\": %.6f, \"fixations\": ",
                          sampled ? "," : "", decoded, time, layouts.size() - 1, json_bool(update->whole_frame),
                          update->tiles_changed, update->regions.size(), update->copied_fraction);
            frames_json += line + fixations_json(fixations) + "}";
            if (encoder) {
                draw_patch_outlines(viz_frame, info.width, info.height, layout, 0, fixations);
                if (info.width % 2 || info.height % 2) {  // 4:2:0 encoders take even sides: drop the odd edge
                    std::vector<uint8_t> even;
                    for (uint32_t y = 0; y < (info.height & ~1u); ++y)
                        even.insert(
                            even.end(), viz_frame.begin() + std::ptrdiff_t(size_t{y} * info.width * 4),
                            viz_frame.begin() + std::ptrdiff_t((size_t{y} * info.width + (info.width & ~1u)) * 4));
                    viz_frame.swap(even);
                }
                encoder->write(viz_frame);
            }
            ++sampled;
        }
        ++decoded;
        const auto now = std::chrono::steady_clock::now();
        if (now - last_report > std::chrono::milliseconds(500)) {
            const double seconds = std::chrono::duration<double>(now - start).count();
            std::fprintf(stderr, "\rframe %zu%s: %.1f frames/s", decoded,
                         info.frames > 0 ? (" of " + std::to_string(info.frames)).c_str() : "",
                         double(decoded) / seconds);
            last_report = now;
        }
    }
    if (decoded == 0) throw Error("video '" + source + "' has no frames");
    if (context.validation_log().count())
        throw Error(std::to_string(context.validation_log().count()) + " Vulkan validation message(s), see above");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (last_report != start) std::fputc('\n', stderr);

    if (!per_frame) write_npy(out_target, {sampled, size_t{budget}, channels, patch, patch}, all_values);
    std::string layouts_json;
    for (size_t i = 0; i < layouts.size(); ++i) layouts_json += (i ? ",\n    " : "\n    ") + layouts[i];
    char head[512];
    std::snprintf(
        head, sizeof head,
        "{\n  \"source\": %s,\n  \"width\": %u, \"height\": %u, \"codec\": %s, \"frames_per_second\": %.6g,\n"
        "  \"device\": %s, \"format\": %s, \"budget\": %u, \"patch_size\": %u, \"channels\": %u, \"every\": %u,\n"
        "  \"threshold\": %u,\n  \"metadata_columns\": [\"cu\", \"cv\", \"su\", \"sv\", \"level\"],\n",
        json_quote(source).c_str(), info.width, info.height, json_quote(info.codec).c_str(), fps,
        json_quote(path->where()).c_str(), json_quote(std::string(format_info(format).name)).c_str(), budget, patch,
        channels, every, args.uint_option("threshold").value_or(0));
    write_text(meta_file, std::string(head) + "  \"layouts\": [" + layouts_json + "\n  ],\n  \"frames\": [" +
                              frames_json + "\n  ]\n}\n");
    if (encoder) encoder->finish();
    outputs.commit();

    std::printf(
        "%s: %ux%u %s, %zu frames decoded (%s), %zu sampled; %.1f%% of texels copied per frame on "
        "average; %zu layout(s)\n",
        source.c_str(), info.width, info.height, info.codec.c_str(), decoded, info.decoder.c_str(), sampled,
        100.0 * copied / double(decoded), layouts.size());
    std::printf("%.1f frames/s, %s\n", double(decoded) / seconds, path->where().c_str());
    std::printf("wrote %s [%zu, %u, %u, %u, %u] float32, %s%s%s\n", out.c_str(), sampled, budget, channels, patch,
                patch, meta.c_str(), viz ? " and " : "", viz ? viz->c_str() : "");
    return 0;
}

}  // namespace tvlm
