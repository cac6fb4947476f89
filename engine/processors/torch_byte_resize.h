#pragma once
// PyTorch's antialiased resize of uint8 images on the CPU, value for value: what
// torch.nn.functional.interpolate(mode="bicubic", "bilinear" or "lanczos", antialias=True) returns for
// a uint8 tensor on the CPU, and so what Hugging Face's processors return for host images
// (torchvision resizes uint8 CPU images natively). Torch computes each axis's weights in
// double, rounds them to int16 at a precision chosen from the largest weight, and filters
// in integers one axis at a time (across the rows, then down the columns), rounding to uint8
// between and after the passes. A float resize of the same image differs from this by up
// to a few uint8 steps, which is why it is its own function.
#include <cstdint>

namespace tvlm {

enum class ByteResizeFilter : uint8_t { bicubic, bilinear, lanczos };

// Which code runs the passes: the fastest this CPU has (AVX2 where it has it), or the
// scalar passes alone (the tests compare the two). Both return the same bytes.
enum class ByteResizeCode : uint8_t { fastest, scalar };

// One uint8 image: element (y, x, c) at data[y * stride_y + x * stride_x + c * stride_c].
struct ByteImageView {
    const uint8_t* data = nullptr;
    uint32_t width = 0, height = 0, channels = 3;
    int64_t stride_y = 0, stride_x = 0, stride_c = 1;
};

// The window (left, top, width, height) of `image` resized to resized_width x
// resized_height, written to `out` as [height][width][channels] bytes. Throws Error for an
// empty image or size, or a window outside the resized image, before writing anything.
void resize_bytes_as_torch(const ByteImageView& image, uint32_t resized_width, uint32_t resized_height, uint32_t left,
                           uint32_t top, uint32_t width, uint32_t height, ByteResizeFilter filter, uint8_t* out,
                           ByteResizeCode code = ByteResizeCode::fastest);

}  // namespace tvlm
