// PNG through libpng's row API. libpng reports errors by longjmp, so the decoding runs in
// one function holding no C++ objects (run_png): every object it fills lives in the caller,
// whose guard frees libpng's structures on every path.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/image_files/decoders.h"
#include "engine/error.h"

namespace tvlm {

namespace {

struct PngInput {
    const uint8_t* bytes;
    size_t size, offset;
};

struct PngState {
    png_structp png = nullptr;
    png_infop info = nullptr;
    char message[256] = {};
    uint32_t width = 0, height = 0;
    bool header_read = false;
    ~PngState() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

void read_bytes(png_structp png, png_bytep out, size_t count) {
    auto* in = static_cast<PngInput*>(png_get_io_ptr(png));
    if (count > in->size - in->offset) png_error(png, "the file ends before the image does (truncated)");
    std::memcpy(out, in->bytes + in->offset, count);
    in->offset += count;
}

[[noreturn]] void on_error(png_structp png, png_const_charp message) {
    auto* state = static_cast<PngState*>(png_get_error_ptr(png));
    std::snprintf(state->message, sizeof state->message, "%s", message);
    png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // ancillary trouble (colour profiles, text): not ours to refuse

// Decodes into `out` (sized row by row); false with state->message on an error, or with
// state->header_read and the size set when the size is over the limits.
bool run_png(PngState* state, PngInput* in, const ImageLimits* limits, bool keep_16_bits, DecodedPixels* out,
             std::vector<png_bytep>* interlaced_rows) {
    if (setjmp(png_jmpbuf(state->png))) return false;
    png_set_read_fn(state->png, in, read_bytes);
    png_set_user_limits(state->png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);  // our limits, our message (below)
    png_read_info(state->png, state->info);
    state->width = png_get_image_width(state->png, state->info);
    state->height = png_get_image_height(state->png, state->info);
    state->header_read = true;
    if (state->width == 0 || state->height == 0 || state->width > limits->max_side ||
        state->height > limits->max_side || uint64_t{state->width} * state->height > limits->max_pixels ||
        uint64_t{state->width} * state->height > limits->memory_pixels)
        return false;
    const bool sixteen = keep_16_bits && png_get_bit_depth(state->png, state->info) == 16;
    png_set_expand(state->png);             // palette -> RGB, grey < 8 bits -> 8, tRNS -> alpha
    if (sixteen) png_set_swap(state->png);  // PNG stores big-endian samples; ours are native (x86, Arm)
    else png_set_strip_16(state->png);
    png_set_gray_to_rgb(state->png);
    png_set_add_alpha(state->png, 0xffff, PNG_FILLER_AFTER);  // opaque at either depth
    const int passes = png_set_interlace_handling(state->png);
    png_read_update_info(state->png, state->info);
    out->bits = sixteen ? 16 : 8;
    const size_t row_bytes = size_t{state->width} * 4 * (out->bits / 8);
    if (png_get_rowbytes(state->png, state->info) != row_bytes)
        png_error(state->png, "unexpected row layout after conversion");
    out->width = state->width;
    out->height = state->height;
    if (passes == 1) {
        for (uint32_t y = 0; y < state->height; ++y) {
            out->bytes.resize((size_t{y} + 1) * row_bytes);
            png_read_row(state->png, out->bytes.data() + size_t{y} * row_bytes, nullptr);
        }
    } else {  // Adam7 fills every row in each of seven passes: the whole image is needed
        out->bytes.resize(row_bytes * state->height);
        interlaced_rows->resize(state->height);
        for (uint32_t y = 0; y < state->height; ++y) (*interlaced_rows)[y] = out->bytes.data() + size_t{y} * row_bytes;
        png_read_image(state->png, interlaced_rows->data());
    }
    png_read_end(state->png, nullptr);  // the chunks after the pixels, up to IEND: a cut file fails here
    return true;
}

// The longest chunk before the image data this decoder accepts. libpng allocates an
// ancillary chunk (sPLT, iCCP, text) whole, as long as its header claims, before reading it
// (png_set_chunk_malloc_max did not stop it): the fuzzer's png_splt_claims_gigabytes.png, 97
// bytes, made it allocate 1.8 GB. Real palettes, profiles and text are far below this.
constexpr uint32_t kMaxChunkBeforeImage = 16u << 20;

// Throws Error when a chunk before the first IDAT claims more than kMaxChunkBeforeImage.
void check_chunk_lengths(const uint8_t* bytes, size_t size, const std::string& name) {
    for (size_t at = 8; at + 8 <= size;) {
        const uint32_t length = uint32_t{bytes[at]} << 24 | uint32_t{bytes[at + 1]} << 16 |
                                uint32_t{bytes[at + 2]} << 8 | bytes[at + 3];
        const std::string type(reinterpret_cast<const char*>(bytes + at + 4), 4);
        if (type == "IDAT" || type == "IEND") return;
        if (length > kMaxChunkBeforeImage)
            throw Error("cannot decode PNG '" + name + "': its " + type + " chunk claims " + std::to_string(length) +
                        " bytes, over the " + std::to_string(kMaxChunkBeforeImage) +
                        " this decoder reads before the image data (the file is corrupt or hostile)");
        at += 12 + size_t{length};
    }
}

}  // namespace

bool is_png(const uint8_t* bytes, size_t size) { return size >= 8 && png_sig_cmp(bytes, 0, 8) == 0; }

DecodedPixels decode_png(const uint8_t* bytes, size_t size, const std::string& name, const ImageLimits& limits,
                         bool keep_16_bits) {
    check_chunk_lengths(bytes, size, name);
    PngState state;
    state.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &state, on_error, on_warning);
    if (state.png) state.info = png_create_info_struct(state.png);
    if (!state.png || !state.info) throw Error("cannot decode PNG '" + name + "': out of memory");
    PngInput in{bytes, size, 0};
    DecodedPixels image;
    std::vector<png_bytep> interlaced_rows;
    if (run_png(&state, &in, &limits, keep_16_bits, &image, &interlaced_rows)) return image;
    if (state.header_read && !state.message[0]) check_image_size(state.width, state.height, name, limits);
    throw Error("cannot decode PNG '" + name + "': " + state.message + " (the file is corrupt or truncated)");
}

}  // namespace tvlm
