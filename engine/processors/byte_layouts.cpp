#include "engine/processors/byte_layouts.h"

#include <string>

#include "engine/error.h"
#include "engine/processors/in_parts.h"

namespace tvlm {

uint64_t byte_layout_values(const PlanarBytes& bytes, const ByteLayoutShape& shape) {
    const uint64_t copies = shape.kind == ByteLayout::merged_patches ? shape.temporal : 1;
    return uint64_t{3} * bytes.height * bytes.width * copies;
}

void write_byte_layout(const PlanarBytes& bytes, const float (&table)[3][256], const ByteLayoutShape& shape, float* out,
                       uint64_t out_values) {
    const int64_t h = bytes.height, w = bytes.width;
    if (!bytes.data || bytes.images == 0 || h == 0 || w == 0) throw Error("the resized images are empty");
    const auto cut = [&](uint32_t cell_w, uint32_t cell_h, const char* what) {
        if (cell_w == 0 || cell_h == 0 || w % cell_w || h % cell_h)
            throw Error(std::string(what) + " of " + std::to_string(cell_w) + "x" + std::to_string(cell_h) +
                        " do not cut a " + std::to_string(w) + "x" + std::to_string(h) + " image");
    };
    if (shape.kind == ByteLayout::tiles) cut(shape.tile_width, shape.tile_height, "tiles");
    if (shape.kind == ByteLayout::merged_patches) {
        cut(shape.patch * shape.merge, shape.patch * shape.merge, "merged patches");
        if (shape.temporal == 0) throw Error("merged patches need a temporal_patch_size of 1 or more");
    }
    const int64_t per_image = int64_t(byte_layout_values(bytes, shape));
    if (!out || out_values != uint64_t(per_image) * bytes.images)
        throw Error("the output holds " + std::to_string(out_values) + " values, not the layout's " +
                    std::to_string(uint64_t(per_image) * bytes.images));
    const PlanarBytes b = bytes;
    const ByteLayoutShape s = shape;
    // Runs of the output along one source row (its x contiguous in both): a planar row, a
    // tile's row, a patch's row. Each run is independent, so any split across threads gives
    // the same output.
    const auto run = [&table, b](int64_t image, int64_t c, int64_t y, int64_t x, int64_t n, float* to) {
        const uint8_t* from = b.data + image * b.stride_b + c * b.stride_c + y * b.stride_y + x * b.stride_x;
        const float* values = table[c];
        for (int64_t i = 0; i < n; ++i) to[i] = values[from[i * b.stride_x]];
    };
    if (s.kind == ByteLayout::planar) {
        // Item: (image, channel, row).
        in_parts(int64_t{b.images} * 3 * h, w * 4, [&](int64_t first, int64_t end) {
            for (int64_t i = first; i < end; ++i) run(i / (3 * h), i / h % 3, i % h, 0, w, out + i * w);
        });
        return;
    }
    if (s.kind == ByteLayout::tiles) {
        const int64_t th = s.tile_height, tw = s.tile_width, across = w / tw;
        // Item: (image, tile row, tile column, channel, row in the tile), in output order.
        const int64_t items = int64_t{b.images} * (h / th) * across * 3 * th;
        in_parts(items, tw * 4, [&](int64_t first, int64_t end) {
            for (int64_t i = first; i < end; ++i) {
                const int64_t ty = i % th, c = i / th % 3, tile = i / (3 * th);
                const int64_t image = tile / ((h / th) * across), gy = tile / across % (h / th), gx = tile % across;
                run(image, c, gy * th + ty, gx * tw, tw, out + i * tw);
            }
        });
        return;
    }
    // Merged patches: a row per patch, (group row, group column, merge row, merge column),
    // its values (channel, time, patch row, patch column); every time slot the same image.
    const int64_t p = s.patch, m = s.merge, t = s.temporal, groups_across = w / (p * m);
    const int64_t patches = (h / p) * (w / p);
    const int64_t row_values = 3 * t * p * p;
    in_parts(int64_t{b.images} * patches, row_values * 4, [&](int64_t first, int64_t end) {
        for (int64_t k = first; k < end; ++k) {
            const int64_t image = k / patches, q = k % patches;
            const int64_t mw = q % m, mh = q / m % m, group = q / (m * m);
            const int64_t gx = group % groups_across, gy = group / groups_across;
            const int64_t y0 = (gy * m + mh) * p, x0 = (gx * m + mw) * p;
            float* row = out + image * per_image + q * row_values;
            for (int64_t c = 0; c < 3; ++c)
                for (int64_t ti = 0; ti < t; ++ti)
                    for (int64_t py = 0; py < p; ++py) run(image, c, y0 + py, x0, p, row + ((c * t + ti) * p + py) * p);
        }
    });
}

}  // namespace tvlm
