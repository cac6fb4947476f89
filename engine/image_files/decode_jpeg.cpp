// JPEG through libjpeg-turbo. Every warning is an error here: libjpeg otherwise fills data
// that is missing ("premature end of data") or corrupt with grey and carries on. Errors
// arrive by longjmp, so decoding runs in run_jpeg, which holds no C++ objects.
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <jpeglib.h>

#include <csetjmp>
#include <cstring>

#include "engine/image_files/decoders.h"
#include "engine/error.h"

namespace tvlm {

namespace {

// Progressive files may hold any number of scans, each a pass over the whole image: a few
// kilobytes can ask for minutes of work. Real encoders write about ten.
constexpr int kMaxScans = 500;

struct JpegState {
    jpeg_decompress_struct info{};
    jpeg_error_mgr errors{};
    jpeg_progress_mgr progress{};
    std::jmp_buf jump{};
    char message[JMSG_LENGTH_MAX + 64] = {};
    bool created = false, header_read = false;
    bool cmyk = false;  // a CMYK or YCCK file, refused by name
    ~JpegState() {
        if (created) jpeg_destroy_decompress(&info);
    }
};

JpegState* state_of(j_common_ptr c) { return static_cast<JpegState*>(c->client_data); }

[[noreturn]] void on_error(j_common_ptr c) {
    JpegState* state = state_of(c);
    (*c->err->format_message)(c, state->message);
    std::longjmp(state->jump, 1);
}

void on_message(j_common_ptr c, int level) {
    if (level < 0) on_error(c);  // a warning: corrupt or missing data
}

void on_progress(j_common_ptr c) {
    auto* d = reinterpret_cast<j_decompress_ptr>(c);
    if (d->input_scan_number > kMaxScans) {
        std::snprintf(state_of(c)->message, sizeof state_of(c)->message, "more than %d progressive scans", kMaxScans);
        std::longjmp(state_of(c)->jump, 1);
    }
}

bool run_jpeg(JpegState* state, const uint8_t* bytes, size_t size, const ImageLimits* limits, DecodedPixels* out) {
    // out->channels: 4 (RGBA) or 3 (RGB) on entry.
    if (setjmp(state->jump)) return false;
    jpeg_create_decompress(&state->info);
    state->created = true;
    state->info.progress = &state->progress;
    jpeg_mem_src(&state->info, bytes, static_cast<unsigned long>(size));
    jpeg_read_header(&state->info, TRUE);
    state->header_read = true;
    const uint32_t width = state->info.image_width, height = state->info.image_height;
    if (width == 0 || height == 0 || width > limits->max_side || height > limits->max_side ||
        uint64_t{width} * height > limits->max_pixels || uint64_t{width} * height > limits->memory_pixels)
        return false;
    // Grey and YCbCr convert to RGBA; libjpeg-turbo has no CMYK -> RGB conversion.
    if (state->info.jpeg_color_space == JCS_CMYK || state->info.jpeg_color_space == JCS_YCCK) {
        state->cmyk = true;
        return false;
    }
    state->info.out_color_space = out->channels == 3 ? JCS_RGB : JCS_EXT_RGBA;
    jpeg_start_decompress(&state->info);
    const size_t row_bytes = size_t{width} * out->channels;
    out->width = width;
    out->height = height;
    out->bytes.reserve(row_bytes * height);  // address space only: pages are touched row by row
    while (state->info.output_scanline < state->info.output_height) {
        const size_t y = state->info.output_scanline;
        out->bytes.resize((y + 1) * row_bytes);
        JSAMPROW row = out->bytes.data() + y * row_bytes;
        jpeg_read_scanlines(&state->info, &row, 1);
    }
    jpeg_finish_decompress(&state->info);
    return true;
}

}  // namespace

bool is_jpeg(const uint8_t* bytes, size_t size) {
    return size >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF;
}

DecodedPixels decode_jpeg(const uint8_t* bytes, size_t size, const std::string& name, const ImageLimits& limits,
                          uint32_t channels) {
    JpegState state;
    state.info.err = jpeg_std_error(&state.errors);
    state.errors.error_exit = on_error;
    state.errors.emit_message = on_message;
    state.progress.progress_monitor = on_progress;
    state.info.client_data = &state;
    DecodedPixels image;
    image.channels = channels == 3 ? 3 : 4;
    if (run_jpeg(&state, bytes, size, &limits, &image)) return image;
    if (state.cmyk)
        throw Error("'" + name +
                    "' is a CMYK JPEG: texturevlm reads greyscale and RGB (YCbCr) JPEGs; convert it to RGB "
                    "first (for example: convert IN.jpg -colorspace sRGB OUT.jpg)");
    if (state.header_read && !state.message[0])
        check_image_size(state.info.image_width, state.info.image_height, name, limits);
    throw Error("cannot decode JPEG '" + name + "': " + state.message + " (the file is corrupt or truncated)");
}

}  // namespace tvlm
