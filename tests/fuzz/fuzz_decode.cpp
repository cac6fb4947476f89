// libFuzzer harness of the image decoders (decode_image, decode_image_float and
// decode_image_rgb: PNG and JPEG by signature, one binary per format so each starts from its
// own corpus) and of the structure walk the GPU decode relies on (check_encoded_image). Built
// with clang's -fsanitize=fuzzer,address,undefined by tests/fuzz/CMakeLists.txt; .ci/fuzz
// runs it.
#include <cstddef>
#include <cstdint>

#include "engine/error.h"
#include "engine/image_files/image_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // Limits small enough that every accepted header decodes quickly; the code paths are
    // those of the full limits.
    const tvlm::ImageLimits limits{2048, 1u << 20};
    try {
        const tvlm::Rgba8Image image = tvlm::decode_image(data, size, "fuzz input", limits);
        if (image.texels.size() != size_t{image.width} * image.height * 4) __builtin_trap();  // a decoder lied
    } catch (const tvlm::Error&) {
        // Refusing is the expected outcome for almost every input.
    }
    try {  // the 16-bit path of float formats
        const tvlm::ImageF image = tvlm::decode_image_float(data, size, "fuzz input", limits);
        if (image.texels.size() != size_t{image.width} * image.height * 4) __builtin_trap();
    } catch (const tvlm::Error&) {}
    try {  // the processors' RGB (or RGBA where transparent) decode
        const tvlm::RgbPixels image = tvlm::decode_image_rgb(data, size, "fuzz input", limits);
        if ((image.channels != 3 && image.channels != 4) ||
            image.bytes.size() != size_t{image.width} * image.height * image.channels)
            __builtin_trap();
    } catch (const tvlm::Error&) {}
    try {  // reads only inside the data, whatever its segment and chunk lengths say
        tvlm::check_encoded_image(data, size, "fuzz input");
    } catch (const tvlm::Error&) {}
    return 0;
}
