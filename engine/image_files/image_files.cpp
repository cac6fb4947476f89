#include "engine/image_files/image_files.h"

#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "engine/image_files/decoders.h"
#include "engine/error.h"
#include "engine/textures/host_memory.h"

namespace tvlm {

namespace fs = std::filesystem;

constexpr uint64_t kMaxFileBytes = uint64_t{1} << 30;

void check_image_size(uint32_t width, uint32_t height, const std::string& name, const ImageLimits& limits) {
    if (width > 0 && height > 0 && width <= limits.max_side && height <= limits.max_side &&
        uint64_t{width} * height <= limits.max_pixels) {
        check_host_memory(uint64_t{width} * height * limits.host_bytes_per_pixel,
                          "image '" + name + "' (" + std::to_string(width) + "x" + std::to_string(height) + ")",
                          "downscale it first, or free memory (TVLM_HOST_MEMORY_LIMIT caps what texturevlm takes)");
        return;
    }
    throw Error("image '" + name + "' is " + std::to_string(width) + "x" + std::to_string(height) +
                ": sides must be 1.." + std::to_string(limits.max_side) + " and at most " +
                std::to_string(limits.max_pixels) + " pixels in all (downscale it first)");
}

namespace {

// `jpeg_channels`: 4 (RGBA, as every decode gives) or 3 (RGB: JPEGs, which have no alpha,
// decoded without the fourth byte).
DecodedPixels decode_pixels(const uint8_t* bytes, size_t size, const std::string& name, const ImageLimits& given,
                            bool keep_16_bits, uint32_t jpeg_channels = 4) {
    ImageLimits limits = given;
    if (const std::optional<uint64_t> available = available_host_memory())
        limits.memory_pixels = *available / std::max<uint64_t>(limits.host_bytes_per_pixel, 1);
    if (is_png(bytes, size)) return decode_png(bytes, size, name, limits, keep_16_bits);
    if (is_jpeg(bytes, size)) return decode_jpeg(bytes, size, name, limits, jpeg_channels);
    throw Error("'" + name +
                "' is not a readable PNG/JPEG image: texturevlm reads PNG and JPEG only (convert other "
                "formats first)");
}

std::vector<uint8_t> read_image_file(const std::string& path) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) throw Error("cannot open image '" + path + "': " + std::strerror(ENOENT));
    if (fs::is_directory(status)) throw Error("'" + path + "' is a directory, not an image: name a PNG or JPEG file");
    // Opening a FIFO blocks until a writer comes, and a device may never end: only files.
    if (!fs::is_regular_file(status))
        throw Error("'" + path + "' is not a regular file (a FIFO, socket or device): name a PNG or JPEG file");
    std::ifstream file(path, std::ios::binary);
    if (!file) throw Error("cannot open image '" + path + "': " + std::strerror(errno));
    file.seekg(0, std::ios::end);
    const std::streamoff size = file.tellg();
    file.seekg(0);
    if (size <= 0) throw Error("image '" + path + "' is empty (or not a regular file): name a PNG or JPEG file");
    if (static_cast<uint64_t>(size) > kMaxFileBytes)
        throw Error("image '" + path + "' is " + std::to_string(size) + " bytes: files over 1 GiB are refused");
    std::vector<uint8_t> bytes(static_cast<size_t>(size));
    if (!file.read(reinterpret_cast<char*>(bytes.data()), size))
        throw Error("cannot read image '" + path + "': " + std::strerror(errno));
    return bytes;
}

}  // namespace

Rgba8Image decode_image(const uint8_t* bytes, size_t size, const std::string& name, const ImageLimits& limits) {
    DecodedPixels pixels = decode_pixels(bytes, size, name, limits, false);
    return {pixels.width, pixels.height, std::move(pixels.bytes)};
}

ImageF decode_image_float(const uint8_t* bytes, size_t size, const std::string& name, const ImageLimits& limits) {
    const DecodedPixels pixels = decode_pixels(bytes, size, name, limits, true);
    ImageF image(pixels.width, pixels.height, 4);
    if (pixels.bits == 16) {
        for (size_t i = 0; i < image.texels.size(); ++i) {
            uint16_t v = 0;
            std::memcpy(&v, pixels.bytes.data() + 2 * i, 2);
            image.texels[i] = static_cast<float>(v) / 65535.0f;
        }
    } else {
        for (size_t i = 0; i < image.texels.size(); ++i) image.texels[i] = static_cast<float>(pixels.bytes[i]) / 255.0f;
    }
    return image;
}

RgbPixels decode_image_rgb(const uint8_t* bytes, size_t size, const std::string& name, const ImageLimits& limits) {
    DecodedPixels pixels = decode_pixels(bytes, size, name, limits, false, 3);
    if (pixels.channels == 3) return {pixels.width, pixels.height, 3, std::move(pixels.bytes)};
    const size_t count = size_t{pixels.width} * pixels.height;
    uint8_t* texels = pixels.bytes.data();
    for (size_t i = 0; i < count; ++i)
        if (texels[4 * i + 3] != 255) return {pixels.width, pixels.height, 4, std::move(pixels.bytes)};
    for (size_t i = 0; i < count; ++i) {  // 3i < 4i: each write lands behind the next read
        texels[3 * i] = texels[4 * i];
        texels[3 * i + 1] = texels[4 * i + 1];
        texels[3 * i + 2] = texels[4 * i + 2];
    }
    pixels.bytes.resize(count * 3);
    return {pixels.width, pixels.height, 3, std::move(pixels.bytes)};
}

RgbPixels load_image_rgb(const std::string& path, const ImageLimits& limits) {
    const std::vector<uint8_t> bytes = read_image_file(path);
    return decode_image_rgb(bytes.data(), bytes.size(), path, limits);
}

Rgba8Image load_image(const std::string& path, const ImageLimits& limits) {
    const std::vector<uint8_t> bytes = read_image_file(path);
    return decode_image(bytes.data(), bytes.size(), path, limits);
}

ImageF load_image_float(const std::string& path, const ImageLimits& limits) {
    const std::vector<uint8_t> bytes = read_image_file(path);
    return decode_image_float(bytes.data(), bytes.size(), path, limits);
}

namespace {

struct PngWriter {
    png_structp png = nullptr;
    png_infop info = nullptr;
    std::FILE* file = nullptr;
    char message[256] = {};
    ~PngWriter() {
        png_destroy_write_struct(&png, info ? &info : nullptr);
        if (file) std::fclose(file);
    }
};

[[noreturn]] void on_write_error(png_structp png, png_const_charp message) {
    auto* writer = static_cast<PngWriter*>(png_get_error_ptr(png));
    std::snprintf(writer->message, sizeof writer->message, "%s", message);
    png_longjmp(png, 1);
}
void on_write_warning(png_structp, png_const_charp) {}

// libpng's part, in a frame without C++ objects (errors arrive by longjmp). Rows come from
// `rows`, which may throw: the exception passes through this frame, the caller cleans up.
bool run_write(PngWriter* w, uint32_t width, uint32_t height, uint32_t channels, const PngRows* rows) {
    if (setjmp(png_jmpbuf(w->png))) return false;
    png_init_io(w->png, w->file);
    png_set_compression_level(w->png, Z_BEST_SPEED);
    const int type = channels == 1 ? PNG_COLOR_TYPE_GRAY : channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGBA;
    png_set_IHDR(w->png, w->info, width, height, 8, type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(w->png, w->info);
    for (uint32_t y = 0; y < height; ++y) png_write_row(w->png, (*rows)(y));
    png_write_end(w->png, nullptr);
    return true;
}

}  // namespace

void write_png(const std::string& path, uint32_t width, uint32_t height, uint32_t channels, const PngRows& rows) {
    if (channels != 1 && channels != 3 && channels != 4) throw Error("PNGs are written with 1, 3 or 4 channels");
    if (width == 0 || height == 0) throw Error("cannot write an empty PNG '" + path + "'");
    PngWriter w;
    w.file = std::fopen(path.c_str(), "wb");
    if (!w.file) throw Error("cannot write PNG '" + path + "': " + std::strerror(errno));
    w.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &w, on_write_error, on_write_warning);
    if (w.png) w.info = png_create_info_struct(w.png);
    if (!w.png || !w.info) throw Error("cannot write PNG '" + path + "': out of memory");
    if (!run_write(&w, width, height, channels, &rows))
        throw Error("cannot write PNG '" + path + "': " + w.message + " (disk full?)");
    std::FILE* file = std::exchange(w.file, nullptr);
    if (std::ferror(file) || std::fclose(file) != 0)
        throw Error("cannot write PNG '" + path + "': " + std::strerror(errno) + " (disk full?)");
}

void write_png(const std::string& path, const ImageF& image) {
    std::vector<uint8_t> row(size_t{image.width} * image.channels);
    write_png(path, image.width, image.height, image.channels, [&](uint32_t y) {
        const float* from = image.texels.data() + y * row.size();
        for (size_t i = 0; i < row.size(); ++i)
            row[i] = static_cast<uint8_t>(std::floor(std::clamp(from[i], 0.0f, 1.0f) * 255.0f + 0.5f));
        return row.data();
    });
}

void write_png(const std::string& path, const Rgba8Image& image) {
    write_png(path, image.width, image.height, 4,
              [&](uint32_t y) { return image.texels.data() + size_t{y} * image.width * 4; });
}

}  // namespace tvlm
