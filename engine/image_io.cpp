#include "image_io.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <stb_image.h>
#include <stb_image_write.h>

#include "error.h"

namespace tvlm {

Rgba8Image load_image(const std::string& path, uint32_t max_dimension) {
    FILE* file = std::fopen(path.c_str(), "rb");
    if (!file) throw Error("cannot open image '" + path + "': " + std::strerror(errno));
    int w = 0, h = 0, channels = 0;
    if (!stbi_info_from_file(file, &w, &h, &channels)) {
        std::fclose(file);
        throw Error("'" + path + "' is not a readable PNG/JPEG image (" + stbi_failure_reason() + ")");
    }
    if (w <= 0 || h <= 0 || static_cast<uint32_t>(w) > max_dimension || static_cast<uint32_t>(h) > max_dimension) {
        std::fclose(file);
        throw Error("image '" + path + "' is " + std::to_string(w) + "x" + std::to_string(h) +
                    ": sides must be 1.." + std::to_string(max_dimension) + " (downscale it first)");
    }
    stbi_uc* data = stbi_load_from_file(file, &w, &h, &channels, 4);
    std::fclose(file);
    if (!data) throw Error("cannot decode image '" + path + "' (" + stbi_failure_reason() + "): the file is corrupt or truncated");
    Rgba8Image image{static_cast<uint32_t>(w), static_cast<uint32_t>(h), {}};
    image.texels.assign(data, data + size_t{image.width} * image.height * 4);
    stbi_image_free(data);
    return image;
}

namespace {

void write_png_atomically(const std::string& path, uint32_t w, uint32_t h, int channels, const uint8_t* data) {
    const std::string temporary = path + ".partial";
    if (!stbi_write_png(temporary.c_str(), static_cast<int>(w), static_cast<int>(h), channels, data,
                        static_cast<int>(w) * channels)) {
        std::remove(temporary.c_str());
        throw Error("cannot write PNG '" + path + "': check that the folder exists and is writable");
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::remove(temporary.c_str());
        throw Error("cannot write PNG '" + path + "': " + ec.message());
    }
}

}  // namespace

void save_png(const std::string& path, const ImageF& image) {
    std::vector<uint8_t> bytes(image.texels.size());
    for (size_t i = 0; i < bytes.size(); ++i) {
        const float v = std::clamp(image.texels[i], 0.0f, 1.0f);
        bytes[i] = static_cast<uint8_t>(std::floor(v * 255.0f + 0.5f));
    }
    write_png_atomically(path, image.width, image.height, static_cast<int>(image.channels), bytes.data());
}

void save_png(const std::string& path, const Rgba8Image& image) {
    write_png_atomically(path, image.width, image.height, 4, image.texels.data());
}

}  // namespace tvlm
