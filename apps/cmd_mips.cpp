// tvlm mips: upload an image (or the embedded test chart), build its mip chain on the GPU,
// write every level and a contact sheet as PNG.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/args.h"
#include "engine/core/context.h"
#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "engine/image_files/image_files.h"
#include "apps/input_image.h"
#include "apps/output_files.h"
#include "apps/progress.h"
#include "engine/textures/test_chart.h"
#include "engine/textures/texture.h"
#include "engine/textures/transfer.h"

namespace tvlm {

namespace {

constexpr const char* kHelp =
    "usage: tvlm mips [IMAGE] [--format F] [--filter blit|box] [--levels N] [--out DIR]\n"
    "                 [--device D] [--validation]\n"
    "Uploads IMAGE (PNG/JPEG; without it, the embedded test chart) into a GPU texture,\n"
    "generates its mip chain and writes DIR/level_00.png, level_01.png, ... and\n"
    "DIR/sheet.png (the levels up to 2048 px wide side by side). DIR is replaced whole,\n"
    "only when everything was written; an existing DIR may hold only an earlier run's files.\n"
    "  --format   rgba8 (default), rgba8_srgb, rgba16f, rgba32f, r32f\n"
    "  --filter   box (exact area average, single-pass compute; the default where the\n"
    "             device runs it) or blit (vkCmdBlitImage)\n"
    "  --levels   number of levels (default: the full chain down to 1x1)\n"
    "  --out      output folder (default: tvlm_mips), created if missing\n"
    "  --device   Vulkan device: index, name substring or UUID (see tvlm info)\n";

// Levels at most this wide go on the contact sheet (all of them for images up to 2048
// wide); larger ones are only written, so the sheet stays small for any image.
constexpr uint32_t kSheetMaxWidth = 2048;

// The levels side by side, top-aligned, 4 px apart, on dark grey.
// What an earlier run left in its folder (the only files a new run may replace).
bool is_mips_output(const std::string& name) {
    return name == "sheet.png" ||
           (name.size() == 12 && name.starts_with("level_") && name.ends_with(".png") &&
            std::isdigit(static_cast<unsigned char>(name[6])) && std::isdigit(static_cast<unsigned char>(name[7])));
}

// Row y of a level as the PNGs show it: the format's channels, rounded to bytes.
void display_row(const std::vector<uint8_t>& bytes, uint32_t width, uint32_t y, Format format, uint8_t* row) {
    const size_t row_bytes = size_t{width} * format_info(format).texel_bytes();
    const ImageF texels = decode_texels({bytes.data() + y * row_bytes, row_bytes}, width, 1, format);
    for (size_t i = 0; i < texels.texels.size(); ++i)
        row[i] = static_cast<uint8_t>(std::floor(std::clamp(texels.texels[i], 0.0f, 1.0f) * 255.0f + 0.5f));
}

// One level as PNG, converted a row at a time from the format's bytes: memory for the
// level's bytes and one row, not a float copy of the level.
void write_level_png(const std::string& path, const std::vector<uint8_t>& bytes, uint32_t width, uint32_t height,
                     Format format) {
    const uint32_t channels = format_info(format).channels;
    std::vector<uint8_t> row(size_t{width} * channels);
    write_png(path, width, height, channels, [&](uint32_t y) {
        display_row(bytes, width, y, format, row.data());
        return row.data();
    });
}

// A level of the contact sheet, kept as display bytes (a quarter of float texels).
struct SheetLevel {
    uint32_t width, height;
    std::vector<uint8_t> bytes;  // [height][width][channels]
};

SheetLevel sheet_level(const std::vector<uint8_t>& bytes, uint32_t width, uint32_t height, Format format) {
    const size_t row = size_t{width} * format_info(format).channels;
    SheetLevel level{width, height, std::vector<uint8_t>(row * height)};
    for (uint32_t y = 0; y < height; ++y) display_row(bytes, width, y, format, level.bytes.data() + y * row);
    return level;
}

// The levels side by side, 4 grey texels apart, written a row at a time (no sheet image).
void write_contact_sheet(const std::string& path, const std::vector<SheetLevel>& levels, uint32_t channels) {
    constexpr uint32_t gap = 4;
    constexpr uint8_t background = 38;  // 0.15, rounded
    uint32_t width = 0;
    for (const SheetLevel& l : levels) width += l.width + gap;
    width -= gap;
    std::vector<uint8_t> row(size_t{width} * channels);
    write_png(path, width, levels[0].height, channels, [&](uint32_t y) {
        std::fill(row.begin(), row.end(), background);
        size_t x0 = 0;
        for (const SheetLevel& l : levels) {
            const size_t bytes = size_t{l.width} * channels;
            if (y < l.height) std::copy_n(l.bytes.data() + y * bytes, bytes, row.data() + x0);
            x0 += bytes + size_t{gap} * channels;
        }
        return row.data();
    });
}

}  // namespace

int run_mips(int argc, char** argv) {
    const Args args(argc, argv, 2, {"format", "filter", "levels", "out", "device"}, {"validation", "help"});
    if (args.flag("help")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    if (args.positionals().size() > 1) throw Error("tvlm mips takes at most one IMAGE (see --help)");
    const Format format = parse_format(args.option_or("format", "rgba8"));
    const std::string filter_name = args.option_or("filter", "");
    if (!filter_name.empty()) parse_mip_filter(filter_name);  // a bad name fails before any work
    OutputFiles outputs;  // checked now, written under a temporary name, put in place at the end
    const std::string out = args.option_or("out", "tvlm_mips");
    const std::filesystem::path staging = outputs.folder(out, "--out", is_mips_output);

    // Input is read and checked before any work; the outputs land only at the end.
    Progress progress("tvlm mips");
    const bool chart = args.positionals().empty();
    if (!chart) progress.step("reading " + args.positionals()[0]);
    std::optional<InputImage> input(chart ? chart_input(format)
                                          : load_input(args.positionals()[0], format, InputUse::gpu_texture));
    const std::string source = chart ? "embedded test chart" : args.positionals()[0];
    const uint32_t width = input->width, height = input->height;

    ContextDesc desc;
    desc.device = DeviceSelector::parse(args.option_or("device", ""));
    desc.validation = desc.validation || args.flag("validation");
    Context context(desc);
    TextureDesc tdesc = TextureDesc::sampled_2d(width, height, format, args.uint_option("levels").value_or(0));
    if (args.option("levels") && tdesc.levels == 0) throw Error("--levels must be at least 1");
    Texture texture = Texture::create(context, tdesc);
    const MipFilter filter = filter_name.empty() ? default_mip_filter(context, format) : parse_mip_filter(filter_name);

    progress.step("uploading and building the mip chain");
    const auto start = std::chrono::steady_clock::now();
    upload(context, texture, input->pixels());
    context.queue().wait(generate_mips(context, texture, filter));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    input.reset();  // the texture holds it now

    // One level at a time: read back, written as PNG row by row, freed.
    std::vector<SheetLevel> sheet_levels;
    for (uint32_t l = 0; l < texture.levels(); ++l) {
        progress.step("writing level " + std::to_string(l) + " of " + std::to_string(texture.levels()));
        const std::vector<uint8_t> bytes = readback(context, texture, l);
        const Extent2D e = texture.extent(l);
        char name[32];
        std::snprintf(name, sizeof name, "level_%02u.png", l);
        write_level_png((staging / name).string(), bytes, e.width, e.height, format);
        if (e.width <= kSheetMaxWidth) sheet_levels.push_back(sheet_level(bytes, e.width, e.height, format));
    }
    write_contact_sheet((staging / "sheet.png").string(), sheet_levels, format_info(format).channels);
    if (context.validation_log().count())
        throw Error(std::to_string(context.validation_log().count()) + " Vulkan validation message(s), see above");
    outputs.commit();
    progress.clear();

    std::printf("%s: %ux%u -> %s texture on %s\n", source.c_str(), width, height,
                std::string(format_info(format).name).c_str(), context.device_info().name.c_str());
    std::printf("%s mip chain: %u levels (%ux%u .. %ux%u), upload + mips %.2f ms host time\n",
                std::string(mip_filter_name(filter)).c_str(), texture.levels(), width, height,
                texture.extent(texture.levels() - 1).width, texture.extent(texture.levels() - 1).height, ms);
    std::printf("wrote %s/level_00.png .. level_%02u.png and %s/sheet.png\n", out.c_str(), texture.levels() - 1,
                out.c_str());
    return 0;
}

}  // namespace tvlm
