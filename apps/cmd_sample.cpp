// tvlm sample: images (or the embedded test chart) in, a patch tensor and its metadata out,
// on CUDA, Vulkan compute or the CPU reference.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/args.h"
#include "apps/commands.h"
#include "engine/error.h"
#include "engine/image_files/image_files.h"
#include "apps/json.h"
#include "apps/output_files.h"
#include "engine/sampling/patch_layouts.h"
#include "apps/sample_backends.h"
#include "apps/sample_viz.h"
#include "engine/textures/test_chart.h"

namespace tvlm {

namespace {

constexpr const char* kHelp =
    "usage: tvlm sample [IMAGE...] [--fixation x,y[;x,y...]] [--budget N] [--patch P]\n"
    "                   [--level L | --foveated | --anisotropic] [--backend cuda|vulkan|cpu|auto]\n"
    "                   [--out patches.npy] [--meta meta.json] [--viz viz.png]\n"
    "Samples P x P patches from IMAGE (PNG/JPEG; several images of one size make a batch, one\n"
    "texture layer each; without IMAGE, the embedded test chart) and writes them as a NumPy\n"
    "float32 array [N, C, P, P] (a batch: [B, N, C, P, P]).\n"
    "  --foveated     (default) a quadtree refined toward the fixations, at most --budget patches\n"
    "  --level L      the image at mip level L cut into P x P patches (a ViT patchify)\n"
    "  --anisotropic  patches --elongation E (default 4) times wider than tall (--vertical: taller),\n"
    "                 at --level L (default 0), filtered anisotropically along their length\n"
    "  --fixation     normalized x,y in [0,1]; several separated by ';' (default 0.5,0.5)\n"
    "  --budget       most patches per image for --foveated (default 273)\n"
    "  --patch        samples per patch side, 1 to 64 (default 16)\n"
    "  --m0 --e0 --bias  cortical magnification M(e) = m0 / (e + e0) (defaults 0.05, 0.05, 0)\n"
    "  --backend      auto (default: CUDA where an NVIDIA GPU with interop is present, else\n"
    "                 Vulkan compute, else CPU), cuda, vulkan or cpu\n"
    "  --format       texture format: rgba8 (default), rgba8_srgb, rgba16f, rgba32f\n"
    "  --channels     3 (default) or 4;  --half  float16 on the GPU (the file stays float32)\n"
    "  --out FILE     patches (default patches.npy); --meta FILE layout and parameters\n"
    "                 (default meta.json); --viz FILE patch outlines beside the patches painted\n"
    "                 back (default: not written)\n"
    "  --device       Vulkan device: index, name substring or UUID (see tvlm info)\n";

// Options of another layout would be silently ignored: refuse them.
void reject_options(const Args& args, std::initializer_list<const char*> names, const std::string& mode) {
    for (const char* name : names)
        if (args.option(name) || args.flag(name))
            throw Error("--" + std::string(name) + " does not apply to " + mode + " (see --help)");
}

PatchLayout make_layout(const Args& args, uint32_t w, uint32_t h, std::string& params_json) {
    const uint32_t patch = args.uint_option("patch").value_or(16);
    const int modes = (args.option("level") && !args.flag("anisotropic")) + args.flag("foveated") +
                      args.flag("anisotropic");
    if (modes > 1) throw Error("choose one of --level L, --foveated and --anisotropic");
    const auto foveated_only = {"fixation", "budget", "m0", "e0", "bias"};
    if (args.flag("anisotropic")) reject_options(args, foveated_only, "--anisotropic patches");
    else if (args.option("level")) reject_options(args, foveated_only, "--level (a grid)");
    if (!args.flag("anisotropic"))
        reject_options(args, {"elongation", "vertical"}, "this layout: it is --anisotropic's");
    if (args.flag("anisotropic")) {
        const AnisotropicParams p{patch, args.uint_option("level").value_or(0),
                                  args.uint_option("elongation").value_or(4), args.flag("vertical")};
        params_json = "{\"elongation\": " + std::to_string(p.elongation) + ", \"level\": " + std::to_string(p.level) +
                      ", \"vertical\": " + json_bool(p.vertical) + "}";
        return anisotropic_layout(w, h, p);
    }
    if (args.option("level")) {
        const uint32_t level = *args.uint_option("level");
        params_json = "{\"level\": " + std::to_string(level) + "}";
        return level_grid_layout(w, h, patch, level);
    }
    FoveatedParams p;
    if (args.option("fixation")) p.fixations = parse_fixations(*args.option("fixation"));
    if (args.option("budget")) p.budget = *args.uint_option("budget");
    p.patch_size = patch;
    if (args.option("m0")) p.m0 = parse_number(*args.option("m0"), "--m0");
    if (args.option("e0")) p.e0 = parse_number(*args.option("e0"), "--e0");
    if (args.option("bias")) p.bias = parse_number(*args.option("bias"), "--bias");
    const FoveatedLayout f = foveated_layout(w, h, p);
    std::string fix;
    for (const Fixation& x : p.fixations)
        fix += (fix.empty() ? "[" : ", [") + std::to_string(x.x) + ", " + std::to_string(x.y) + "]";
    params_json = "{\"fixations\": [" + fix + "], \"budget\": " + std::to_string(p.budget) +
                  ", \"m0\": " + std::to_string(p.m0) + ", \"e0\": " + std::to_string(p.e0) +
                  ", \"bias\": " + std::to_string(p.bias) + ", \"threshold\": " + std::to_string(f.threshold) + "}";
    return f.layout;
}

std::string meta_json(const PatchLayout& layout, const SampleRequest& request, const std::string& params,
                      const std::string& backend, const std::string& device, const SampleResult& result) {
    std::string s = "{\n  \"layout\": " + json_quote(std::string(layout.kind)) +
                    ",\n  \"sampling\": " + json_quote(std::string(sampling_mode_name(layout.mode))) +
                    ",\n  \"parameters\": " + params + ",\n  \"backend\": " + json_quote(backend) +
                    ",\n  \"device\": " + json_quote(device) +
                    ",\n  \"format\": " + json_quote(std::string(format_info(request.format).name)) +
                    ",\n  \"width\": " + std::to_string(layout.width) +
                    ", \"height\": " + std::to_string(layout.height) +
                    ",\n  \"images\": " + std::to_string(layout.images) +
                    ", \"patches_per_image\": " + std::to_string(layout.patches_per_image) +
                    ", \"channels\": " + std::to_string(request.output.channels) +
                    ", \"patch_size\": " + std::to_string(layout.patch_size) +
                    ",\n  \"max_anisotropy\": " + std::to_string(result.max_anisotropy) +
                    ",\n  \"metadata_columns\": [\"cu\", \"cv\", \"su\", \"sv\", \"level\"],\n  \"metadata\": [";
    const std::vector<float> rows = patch_metadata(layout);
    char buf[160];
    for (size_t n = 0; n < layout.patches.size(); ++n) {
        std::snprintf(buf, sizeof buf, "%s\n    [%.9g, %.9g, %.9g, %.9g, %.9g]", n ? "," : "", double(rows[n * 5]),
                      double(rows[n * 5 + 1]), double(rows[n * 5 + 2]), double(rows[n * 5 + 3]),
                      double(rows[n * 5 + 4]));
        s += buf;
    }
    s += "\n  ],\n  \"layers\": [";
    for (size_t n = 0; n < layout.patches.size(); ++n) s += (n ? ", " : "") + std::to_string(layout.patches[n].layer);
    s += "],\n  \"axes\": [";
    for (size_t n = 0; n < layout.patches.size(); ++n) {
        std::snprintf(buf, sizeof buf, "%s[%.9g, %.9g]", n ? ", " : "", double(layout.patches[n].axis_x),
                      double(layout.patches[n].axis_y));
        s += buf;
    }
    return s + "]\n}\n";
}

}  // namespace

int run_sample(int argc, char** argv) {
    const Args args(argc, argv, 2,
                    {"fixation", "budget", "patch", "level", "elongation", "backend", "format", "channels", "out",
                     "meta", "viz", "device", "m0", "e0", "bias"},
                    {"foveated", "anisotropic", "vertical", "half", "validation", "help"});
    if (args.flag("help")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    const std::string backend = args.option_or("backend", "auto");
    if (backend != "auto" && backend != "cuda" && backend != "vulkan" && backend != "cpu")
        throw Error("unknown backend '" + backend + "': expected auto, cuda, vulkan or cpu");

    // Outputs are checked first and written under temporary names; they land together at the
    // end, or (on any failure) not at all.
    OutputFiles outputs;
    const std::string out = args.option_or("out", "patches.npy"), meta = args.option_or("meta", "meta.json");
    const std::string out_file = outputs.file(out, "--out"), meta_file = outputs.file(meta, "--meta");
    const std::string viz_file = args.option("viz") ? outputs.file(*args.option("viz"), "--viz") : "";

    // Everything that can fail on input is checked before anything is written.
    SampleRequest request;
    request.format = parse_format(args.option_or("format", "rgba8"));
    if (request.format == Format::r32f) throw Error("patches need colour: use rgba8, rgba8_srgb, rgba16f or rgba32f");
    request.output = {args.uint_option("channels").value_or(3), args.flag("half")};
    if (request.output.channels != 3 && request.output.channels != 4)
        throw Error("--channels must be 3 or 4, not " + std::to_string(request.output.channels));
    std::vector<std::string> sources = args.positionals();
    if (sources.empty()) request.images.push_back(chart_input(request.format));
    for (const std::string& path : sources) {
        request.images.push_back(
            load_input(path, request.format, backend == "cpu" ? InputUse::cpu_reference : InputUse::gpu_texture));
        const InputImage &a = request.images.front(), &b = request.images.back();
        if (a.width != b.width || a.height != b.height)
            throw Error("images of one batch must have one size: '" + sources.front() + "' is " +
                        std::to_string(a.width) + "x" + std::to_string(a.height) + ", '" + path + "' is " +
                        std::to_string(b.width) + "x" + std::to_string(b.height));
    }
    const uint32_t w = request.images[0].width, h = request.images[0].height;
    std::string params;
    const PatchLayout one = make_layout(args, w, h, params);
    request.layout = batch_layouts(std::vector<PatchLayout>(request.images.size(), one));

    ContextDesc desc;
    desc.device = DeviceSelector::parse(args.option_or("device", ""));
    desc.validation = desc.validation || args.flag("validation");
    std::optional<Context> context;
    std::string used = backend, device = "CPU";
    if (backend != "cpu") {
        try {
            context.emplace(desc);
            device = context->device_info().name;
        } catch (const Error& e) {
            if (backend != "auto" || args.option("device")) throw;  // a device asked for by name must exist
            std::fprintf(stderr, "note: no Vulkan device (%s): using the CPU reference\n", e.what());
        }
    }
    SampleResult result;
    if (context && (backend == "auto" || backend == "cuda")) {
        try {
            result = sample_on_cuda(*context, request);
            used = "cuda";
        } catch (const Error& e) {
            if (backend == "cuda") throw;
            std::fprintf(stderr, "note: CUDA unavailable (%s): using Vulkan compute\n", e.what());
        }
    }
    if (context && used != "cuda") {
        result = sample_on_vulkan(*context, request);
        used = "vulkan";
    }
    if (!context) {
        result = sample_on_cpu(request);
        used = "cpu";
    }
    if (context && context->validation_log().count())
        throw Error(std::to_string(context->validation_log().count()) + " Vulkan validation message(s), see above");

    const PatchLayout& layout = request.layout;
    const size_t b = layout.images, n = layout.patches_per_image, c = request.output.channels, p = layout.patch_size;
    const std::vector<size_t> shape = b > 1 ? std::vector<size_t>{b, n, c, p, p} : std::vector<size_t>{n, c, p, p};
    write_npy(out_file, shape, result.values);
    write_text(meta_file, meta_json(layout, request, params, used, device, result));
    if (!viz_file.empty())
        write_png(viz_file, sample_visualisation(to_image(request.images[0].pixels(), 4), layout, result.values,
                                                 request.output.channels, 0, format_info(request.format).srgb));
    outputs.commit();

    std::printf("%s: %ux%u x %zu image(s), %s layout: %zu patches of %zux%zu per image\n",
                sources.empty() ? "embedded test chart" : sources.front().c_str(), w, h, b,
                std::string(layout.kind).c_str(), n, p, p);
    std::printf("backend: %s on %s\n", used.c_str(), device.c_str());
    std::string dims;
    for (size_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    std::printf("wrote %s [%s] float32, %s%s%s\n", out.c_str(), dims.c_str(), meta.c_str(),
                args.option("viz") ? " and " : "", args.option("viz") ? args.option("viz")->c_str() : "");
    return 0;
}

}  // namespace tvlm
