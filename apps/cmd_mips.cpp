// tvlm mips: upload an image (or the embedded test chart), build its mip chain on the GPU,
// write every level and a contact sheet as PNG.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "args.h"
#include "context.h"
#include "error.h"
#include "generate_mips.h"
#include "image_files.h"
#include "test_chart.h"
#include "texture.h"
#include "transfer.h"

namespace tvlm {

namespace {

constexpr const char* kHelp =
    "usage: tvlm mips [IMAGE] [--format F] [--filter blit|box] [--levels N] [--out DIR]\n"
    "                 [--device D] [--validation]\n"
    "Uploads IMAGE (PNG/JPEG; without it, the embedded test chart) into a GPU texture,\n"
    "generates its mip chain and writes DIR/level_00.png, level_01.png, ... and\n"
    "DIR/sheet.png (all levels side by side).\n"
    "  --format   rgba8 (default), rgba8_srgb, rgba16f, rgba32f, r32f\n"
    "  --filter   box (exact area average, single-pass compute; the default where the\n"
    "             device runs it) or blit (vkCmdBlitImage)\n"
    "  --levels   number of levels (default: the full chain down to 1x1)\n"
    "  --out      output folder (default: tvlm_mips), created if missing\n"
    "  --device   Vulkan device: index, name substring or UUID (see tvlm info)\n";

// All levels side by side, top-aligned, 4 px apart, on dark grey.
ImageF contact_sheet(const std::vector<ImageF>& levels) {
    constexpr uint32_t gap = 4;
    uint32_t width = 0;
    for (const ImageF& l : levels) width += l.width + gap;
    ImageF sheet(width - gap, levels[0].height, levels[0].channels);
    std::fill(sheet.texels.begin(), sheet.texels.end(), 0.15f);
    uint32_t x0 = 0;
    for (const ImageF& l : levels) {
        for (uint32_t y = 0; y < l.height; ++y)
            for (uint32_t x = 0; x < l.width; ++x)
                for (uint32_t c = 0; c < l.channels; ++c) sheet.at(x0 + x, y, c) = l.at(x, y, c);
        x0 += l.width + gap;
    }
    return sheet;
}

}  // namespace

int run_mips(int argc, char** argv) {
    const Args args(argc, argv, 2, {"format", "filter", "levels", "out", "device"}, {"validation", "help"});
    if (args.flag("help")) { std::fputs(kHelp, stdout); return 0; }
    if (args.positionals().size() > 1) throw Error("tvlm mips takes at most one IMAGE (see --help)");
    const Format format = parse_format(args.option_or("format", "rgba8"));
    const std::string filter_name = args.option_or("filter", "");
    if (!filter_name.empty()) parse_mip_filter(filter_name);  // a bad name fails before any work
    const std::filesystem::path out = args.option_or("out", "tvlm_mips");

    // Everything that can fail on input is checked before the output folder is touched.
    const bool chart = args.positionals().empty();
    const Rgba8Image input = chart ? make_test_chart() : load_image(args.positionals()[0]);
    const std::string source = chart ? "embedded test chart" : args.positionals()[0];

    ContextDesc desc;
    desc.device = DeviceSelector::parse(args.option_or("device", ""));
    desc.validation = desc.validation || args.flag("validation");
    Context context(desc);
    TextureDesc tdesc = TextureDesc::sampled_2d(input.width, input.height, format, args.uint_option("levels").value_or(0));
    if (args.option("levels") && tdesc.levels == 0) throw Error("--levels must be at least 1");
    Texture texture = Texture::create(context, tdesc);
    const MipFilter filter = filter_name.empty() ? default_mip_filter(context, format) : parse_mip_filter(filter_name);

    const auto start = std::chrono::steady_clock::now();
    upload(context, texture, host_pixels(input.texels, input.width, input.height));
    context.queue().wait(generate_mips(context, texture, filter));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

    std::vector<ImageF> levels;
    for (uint32_t l = 0; l < texture.levels(); ++l) levels.push_back(readback_image(context, texture, l));

    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec) throw Error("cannot create output folder '" + out.string() + "': " + ec.message());
    for (uint32_t l = 0; l < levels.size(); ++l) {
        char name[32];
        std::snprintf(name, sizeof name, "level_%02u.png", l);
        write_png((out / name).string(), levels[l]);
    }
    write_png((out / "sheet.png").string(), contact_sheet(levels));

    std::printf("%s: %ux%u -> %s texture on %s\n", source.c_str(), input.width, input.height,
                std::string(format_info(format).name).c_str(), context.device_info().name.c_str());
    std::printf("%s mip chain: %u levels (%ux%u .. %ux%u), upload + mips %.2f ms host time\n",
                std::string(mip_filter_name(filter)).c_str(), texture.levels(), input.width, input.height,
                levels.back().width, levels.back().height, ms);
    std::printf("wrote %s/level_00.png .. level_%02u.png and %s/sheet.png\n", out.string().c_str(),
                texture.levels() - 1, out.string().c_str());
    if (context.validation_log().count())
        throw Error(std::to_string(context.validation_log().count()) + " Vulkan validation message(s), see above");
    return 0;
}

}  // namespace tvlm
