#pragma once
// An image given to the command line, kept in the precision its texture format stores:
// RGBA8 bytes for 8-bit formats, float RGBA for float formats (so a 16-bit PNG fills an
// rgba16f or rgba32f texture with all its bits).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/textures/format.h"
#include "engine/textures/image.h"

namespace tvlm {

struct InputImage {
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> rgba8;  // 8-bit formats
    ImageF rgba_float;           // float formats (4 channels)

    // What upload() takes, whichever is held.
    HostPixels pixels() const;
};

// Where the image's texels go: a GPU texture (staging, and the texture itself where the
// Vulkan device is the CPU), or the CPU reference (its chain in float RGBA).
enum class InputUse { gpu_texture, cpu_reference };

// Host bytes a job holds per pixel of its image, at its peak: the decoded image and what
// `use` adds. Documented in docs/cli.md ("Memory").
uint64_t host_bytes_per_pixel(Format format, InputUse use);

// A PNG/JPEG file (image_files.h: limits, errors) for `format`, refused at its header where
// the job (`use`) would not fit the host memory this process may take.
InputImage load_input(const std::string& path, Format format, InputUse use);
// The embedded test chart for `format`.
InputImage chart_input(Format format);

}  // namespace tvlm
