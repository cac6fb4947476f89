#include "cuda_overlay.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "cuda_check.h"
#include "error.h"
#include "overlay.h"
#include "overlay/overlay_font.h"
#include "overlay/overlay_scene.h"

namespace tvlm {

namespace {

// Grows `buffer` to at least `count` elements (at least one), after the work that may still
// read it on `stream`.
template <class T>
void ensure(DeviceBuffer<T>& buffer, size_t count, cudaStream_t stream) {
    count = count ? count : 1;
    if (buffer.size() >= count) return;
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
    buffer = DeviceBuffer<T>(count);
}

}  // namespace

void CudaOverlay::draw(std::span<const gpu::OverlayShape> shapes, void* frame, size_t pitch, uint32_t width,
                       uint32_t height, Format format, cudaStream_t stream) {
    if (!frame) throw Error("CudaOverlay::draw: no frame (a null pointer)");
    if (width == 0 || height == 0) throw Error("CudaOverlay::draw: an empty frame");
    check_overlay_format(format, "CudaOverlay::draw");
    const size_t texel = format_info(format).texel_bytes();
    if (pitch % texel || pitch < size_t{width} * texel)
        throw Error("CudaOverlay::draw: rows " + std::to_string(pitch) + " bytes apart: " +
                    std::string(format_info(format).name) + " rows need at least " + std::to_string(size_t{width} * texel) +
                    " bytes, a multiple of " + std::to_string(texel));
    const uint64_t pairs = overlay_tile_pairs(shapes, width, height);
    const bool glyphs = std::any_of(shapes.begin(), shapes.end(), [](const gpu::OverlayShape& s) {
        return s.kind == TVLM_SHAPE_GLYPH;
    });
    const OverlayFont* font = overlay_font();
    if (glyphs && !font) throw Error("CudaOverlay::draw: labels need the font this build left out (no stb_truetype)");
    const size_t tiles = size_t((width + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE) *
                         ((height + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE);
    if (shapes.empty()) return;
    ensure(shapes_, shapes.size(), stream);
    ensure(counts_, tiles + 2, stream);
    ensure(scan_scratch_, overlay_scan_scratch_bytes(uint32_t(tiles)), stream);
    ensure(offsets_, tiles + 1, stream);
    ensure(busy_, tiles, stream);
    ensure(lists_, size_t(pairs), stream);
    if (glyphs && atlas_.size() == 0) {  // once; stream-ordered before the first draw reading it
        atlas_ = DeviceBuffer<uint8_t>(size_t{font->width} * font->height);
        TVLM_CUDA_CHECK(cudaMemcpyAsync(atlas_.data(), font->sdf, atlas_.bytes(), cudaMemcpyHostToDevice, stream));
    }
    TVLM_CUDA_CHECK(cudaEventSynchronize(copied_.handle()));  // staging_ is free again
    if (staging_count_ < shapes.size()) {
        staging_ = allocate_pinned(shapes.size_bytes());
        staging_count_ = shapes.size();
    }
    std::memcpy(staging_.handle(), shapes.data(), shapes.size_bytes());
    TVLM_CUDA_CHECK(cudaMemcpyAsync(shapes_.data(), staging_.handle(), shapes.size_bytes(), cudaMemcpyHostToDevice, stream));
    TVLM_CUDA_CHECK(cudaEventRecord(copied_.handle(), stream));
    launch_overlay({.shapes = shapes_.data(),
                    .shape_count = uint32_t(shapes.size()),
                    .counts = counts_.data(),
                    .offsets = offsets_.data(),
                    .busy = busy_.data(),
                    .lists = lists_.data(),
                    .busy_bound = uint32_t(std::min<uint64_t>(pairs, tiles)),
                    .frame = frame,
                    .pitch = pitch,
                    .width = width,
                    .height = height,
                    .half = format == Format::rgba16f,
                    .srgb = format == Format::rgba8_srgb,
                    .atlas = glyphs ? atlas_.data() : nullptr,
                    .atlas_width = font ? font->width : 0,
                    .scan_scratch = scan_scratch_.data(),
                    .scan_scratch_bytes = scan_scratch_.size()},
                   stream);
}

}  // namespace tvlm
