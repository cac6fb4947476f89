// The structure of a whole PNG or JPEG walked without decoding it (image_files.h): a linear
// pass over the bytes, for decoders that may not report a stream that ends early.
#include <cstring>
#include <string>

#include "engine/image_files/decoders.h"
#include "engine/image_files/image_files.h"
#include "engine/error.h"

namespace tvlm {

namespace {

uint32_t big_endian_32(const uint8_t* p) {
    return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

[[noreturn]] void truncated(const char* format, const std::string& name, const char* where) {
    throw Error("cannot decode " + std::string(format) + " '" + name + "': the data ends " + where +
                " (the file is truncated)");
}

[[noreturn]] void corrupt(const char* format, const std::string& name, const std::string& what) {
    throw Error("cannot decode " + std::string(format) + " '" + name + "': " + what + " (the file is corrupt)");
}

// Chunks (length, type, data, CRC) from the signature to IEND.
void walk_png(const uint8_t* bytes, size_t size, const std::string& name) {
    for (size_t at = 8;;) {
        if (size - at < 12) truncated("PNG", name, "before its IEND chunk");
        const uint64_t next = at + 12 + uint64_t{big_endian_32(bytes + at)};
        if (std::memcmp(bytes + at + 4, "IEND", 4) == 0) return;
        if (next > size) truncated("PNG", name, "inside a chunk");
        at = static_cast<size_t>(next);
    }
}

// Markers and their segments from SOI to EOI; after each SOS, the entropy-coded data up to
// the next marker that is neither a stuffed 0xFF00 nor a restart marker.
void walk_jpeg(const uint8_t* bytes, size_t size, const std::string& name) {
    const uint8_t* end = bytes + size;
    const uint8_t* p = bytes + 2;
    for (;;) {
        if (p >= end) truncated("JPEG", name, "before its end-of-image marker");
        if (*p != 0xFF) corrupt("JPEG", name, "no marker at byte " + std::to_string(p - bytes));
        while (p < end && *p == 0xFF) ++p;  // fill bytes may precede a marker
        if (p >= end) truncated("JPEG", name, "before its end-of-image marker");
        const uint8_t marker = *p++;
        if (marker == 0xD9) return;                                          // EOI
        if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no segment
        if (end - p < 2) truncated("JPEG", name, "inside a marker segment");
        const size_t length = size_t{p[0]} << 8 | p[1];
        if (length < 2) corrupt("JPEG", name, "a marker segment of length " + std::to_string(length));
        if (static_cast<size_t>(end - p) < length) truncated("JPEG", name, "inside a marker segment");
        p += length;
        if (marker != 0xDA) continue;  // SOS: its scan's entropy-coded data follows
        for (;;) {
            const void* ff = std::memchr(p, 0xFF, static_cast<size_t>(end - p));
            if (!ff) truncated("JPEG", name, "inside its image data");
            p = static_cast<const uint8_t*>(ff);
            if (end - p < 2) truncated("JPEG", name, "inside its image data");
            const uint8_t next = p[1];
            if (next == 0x00 || (next >= 0xD0 && next <= 0xD7)) {
                p += 2;
            } else if (next == 0xFF) {
                ++p;
            } else {
                break;  // a marker: the walk above reads it
            }
        }
    }
}

}  // namespace

EncodedFormat check_encoded_image(const uint8_t* bytes, size_t size, const std::string& name) {
    if (is_jpeg(bytes, size)) {
        walk_jpeg(bytes, size, name);
        return EncodedFormat::jpeg;
    }
    if (is_png(bytes, size)) {
        walk_png(bytes, size, name);
        return EncodedFormat::png;
    }
    throw Error("'" + name +
                "' is not a readable PNG/JPEG image: texturevlm reads PNG and JPEG only (convert other formats "
                "first)");
}

}  // namespace tvlm
