// tvlm overlay: a scene of boxes, points, lines and curved links (JSON) composited over an
// image (or the embedded test chart) by the GPU overlay renderer (Vulkan compute) or the
// CPU reference; --knn links the points with a stable KNN graph drawn as curves.
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "apps/args.h"
#include "apps/commands.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/image_files/image_files.h"
#include "apps/output_files.h"
#include "apps/progress.h"
#include "engine/overlay/knn_graph.h"
#include "engine/overlay/overlay_reference.h"
#include "engine/overlay/overlay_renderer.h"
#include "engine/overlay/overlay_scene.h"
#include "engine/overlay/overlay_scene_json.h"
#include "engine/textures/test_chart.h"

namespace tvlm {

namespace {

constexpr const char* kHelp =
    "usage: tvlm overlay [IMAGE] --scene scene.json [--knn K] [--hysteresis H] [--out overlay.png]\n"
    "                    [--srgb] [--backend vulkan|cpu] [--device D] [--validation]\n"
    "Composites the scene (a JSON file: boxes with rounded corners, lines, trails, curved links,\n"
    "points and text labels; docs/cli.md has the schema) over IMAGE (PNG/JPEG; without it, the\n"
    "embedded test chart) and writes a PNG. Pixels, origin top-left; a box's x, y is its centre.\n"
    "Drawing order: boxes, then lines, trails, curves (and --knn links), points, labels on top.\n"
    "  --knn K      link every point to its K nearest (a symmetric graph) with curved links\n"
    "  --srgb       blend in linear light (the image's bytes are sRGB)\n"
    "  --hysteresis H  a KNN link of the previous frame survives while within rank K + H (default 2)\n"
    "  --backend    vulkan (default: Vulkan compute, binned into 16x16 tiles) or cpu (the reference)\n"
    "  --out        output PNG (default overlay.png)\n"
    "  --device     Vulkan device: index, name substring or UUID (see tvlm info)\n";

}  // namespace

int run_overlay(int argc, char** argv) {
    const Args args(argc, argv, 2, {"scene", "knn", "hysteresis", "out", "backend", "device"},
                    {"srgb", "validation", "help"});
    if (args.flag("help")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    if (!args.option("scene")) throw Error("tvlm overlay needs --scene scene.json (see tvlm overlay --help)");
    if (args.positionals().size() > 1) throw Error("tvlm overlay draws on one image at a time");
    const std::string backend = args.option_or("backend", "vulkan");
    if (backend != "vulkan" && backend != "cpu") throw Error("--backend must be vulkan or cpu, not " + backend);
    // Everything is read and checked before any work; the output lands only at the end.
    OutputFiles outputs;
    const std::string out = args.option_or("out", "overlay.png");
    const std::string staged = outputs.file(out, "--out");
    Progress progress("tvlm overlay");
    progress.step("reading " + *args.option("scene"));
    OverlaySceneFile file = read_overlay_scene(*args.option("scene"));
    const bool chart = args.positionals().empty();
    Rgba8Image image = chart ? make_test_chart(1536, 1024) : load_image(args.positionals()[0]);
    size_t links = 0;
    if (const std::optional<uint32_t> k = args.uint_option("knn")) {
        KnnGraph graph({.k = *k, .hysteresis = args.uint_option("hysteresis").value_or(2)});
        links = link_points(file.scene, file.point_tracks, graph);
    }
    progress.step("preparing the shapes");
    const std::vector<gpu::OverlayShape> shapes = overlay_shapes(file.scene, image.width, image.height);
    const bool srgb = args.flag("srgb");

    progress.step("drawing " + std::to_string(shapes.size()) + " shapes");
    const auto start = std::chrono::steady_clock::now();
    std::string where = "the CPU reference";
    if (backend == "vulkan") {
        ContextDesc desc;
        desc.device = DeviceSelector::parse(args.option_or("device", ""));
        desc.validation = desc.validation || args.flag("validation");
        Context context(desc);
        draw_overlay_on_host(context, shapes, image.texels, image.width, image.height,
                             srgb ? Format::rgba8_srgb : Format::rgba8_unorm);
        if (context.validation_log().count())
            throw Error(std::to_string(context.validation_log().count()) + " Vulkan validation message(s), see above");
        where = "Vulkan compute on " + context.device_info().name;
    } else {
        draw_overlay_reference(shapes, image.texels, image.width, image.height, srgb);
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    progress.step("writing " + out);
    write_png(staged, image);
    outputs.commit();
    progress.clear();
    std::printf(
        "%s: %ux%u, %zu shapes drawn (%zu boxes, %zu lines, %zu curves incl. %zu KNN links, %zu points) by %s "
        "in %.2f ms (upload, draw, readback)\nwrote %s\n",
        chart ? "embedded test chart" : args.positionals()[0].c_str(), image.width, image.height, shapes.size(),
        file.scene.boxes.size(), file.scene.lines.size(), file.scene.curves.size(), links, file.scene.points.size(),
        where.c_str(), ms, out.c_str());
    return 0;
}

}  // namespace tvlm
