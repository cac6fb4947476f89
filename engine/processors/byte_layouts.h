#pragma once
// Resized uint8 images as a processor's float32 values on the host, in one pass: each byte's
// value comes from a table per channel (the normalization of all 256 bytes, computed by the
// caller with the processor's own float32 operations, so each value is what those operations
// give it), written straight into HF's layout.
#include <cstdint>

namespace tvlm {

enum class ByteLayout : uint8_t {
    planar,          // [3][height][width]
    tiles,           // [tiles, row-major][3][tile_height][tile_width]
    merged_patches,  // HF's Qwen2-VL rows: [patch groups][merge][merge][3][temporal][patch][patch]
};

struct ByteLayoutShape {
    ByteLayout kind = ByteLayout::planar;
    uint32_t tile_width = 0, tile_height = 0;     // tiles
    uint32_t patch = 0, merge = 0, temporal = 0;  // merged_patches: each image its `temporal` copies
};

// Images [images][3][height][width] (element (b, c, y, x) at data[b * stride_b + c * stride_c
// + y * stride_y + x * stride_x]).
struct PlanarBytes {
    const uint8_t* data = nullptr;
    uint32_t images = 0, height = 0, width = 0;
    int64_t stride_b = 0, stride_c = 0, stride_y = 0, stride_x = 0;
};

// Float32 values per image: 3 * height * width, times `temporal` for merged patches.
uint64_t byte_layout_values(const PlanarBytes& bytes, const ByteLayoutShape& shape);

// Writes every image's values into `out` (`out_values` long: images one after another,
// byte_layout_values() each), value table[c][byte] for channel c. Throws Error, writing
// nothing, where the layout does not cut the images (tiles or merged cells that do not divide
// them, a zero size) or `out` is not their size.
void write_byte_layout(const PlanarBytes& bytes, const float (&table)[3][256], const ByteLayoutShape& shape, float* out,
                       uint64_t out_values);

}  // namespace tvlm
