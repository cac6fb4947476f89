#include "cuda_pipelines/cuda_overlay.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "cuda/cuda_check.h"
#include "engine/error.h"
#include "cuda/overlay/overlay.h"
#include "engine/overlay/overlay_font.h"
#include "engine/overlay/overlay_scene.h"

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
                       uint32_t height, Format format, cudaStream_t stream, const OverlayDeviceLinks* links) {
    if (!frame) throw Error("CudaOverlay::draw: no frame (a null pointer)");
    if (width == 0 || height == 0) throw Error("CudaOverlay::draw: an empty frame");
    if (width > kOverlayMaxSide || height > kOverlayMaxSide)
        throw Error("CudaOverlay::draw: a " + std::to_string(width) + "x" + std::to_string(height) +
                    " frame; frames up to " + std::to_string(kOverlayMaxSide) +
                    " pixels a side are drawn: split it into parts");
    check_overlay_format(format, "CudaOverlay::draw");
    const size_t texel = format_info(format).texel_bytes();
    if (pitch % texel || pitch < size_t{width} * texel)
        throw Error("CudaOverlay::draw: rows " + std::to_string(pitch) +
                    " bytes apart: " + std::string(format_info(format).name) + " rows need at least " +
                    std::to_string(size_t{width} * texel) + " bytes, a multiple of " + std::to_string(texel));
    if (links && (links->at > shapes.size() || !(links->width >= 0)))
        throw Error("CudaOverlay::draw: device links placed at shape " + std::to_string(links->at) + " of " +
                    std::to_string(shapes.size()) + ", or with a negative or NaN width");
    const size_t link_slots = links ? links->max_edges : 0;
    const bool glyphs = std::any_of(shapes.begin(), shapes.end(),
                                    [](const gpu::OverlayShape& s) { return s.kind == TVLM_SHAPE_GLYPH; });
    const OverlayFont* font = overlay_font();
    if (glyphs && !font) throw Error("CudaOverlay::draw: labels need the font this build left out (no stb_truetype)");
    const size_t tiles = size_t((width + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE) *
                         ((height + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE);
    // The scene's (shape, tile) pairs, at most: a bound on the busy tiles where no device
    // links come (theirs are known on the device only).
    const uint64_t pairs = overlay_tile_pairs(shapes, width, height);
    const size_t total = shapes.size() + link_slots;
    if (total == 0) return;
    half_ ^= 1;  // this draw's half of the staging and kernel buffers (the draw before may still read the other)
    ensure(shapes_[half_], total, stream);
    ensure(busy_[half_], tiles, stream);
    for (int h = 0; h < 2; ++h) {  // both halves at once: the counts must be zero before any draw uses them
        const uint32_t* counts_before = counts_[h].data();
        ensure(counts_[h], tiles, stream);
        if (counts_[h].data() != counts_before) counts_zeroed_ = false;
        const OverlayListEntry* lists_before = lists_[h].data();
        ensure(lists_[h], tiles * kOverlayTileList, stream);
        if (lists_[h].data() != lists_before)  // the shading reads a list's 32 entries before its count masks them
            TVLM_CUDA_CHECK(cudaMemsetAsync(lists_[h].data(), 0, lists_[h].bytes(), stream));
    }
    if (busy_counts_.size() == 0) busy_counts_ = DeviceBuffer<uint32_t>(3), counts_zeroed_ = false;
    if (!counts_zeroed_) {  // new memory, or a draw that did not launch both passes
        for (DeviceBuffer<uint32_t>& counts : counts_)
            TVLM_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, counts.bytes(), stream));
        TVLM_CUDA_CHECK(cudaMemsetAsync(busy_counts_.data(), 0, busy_counts_.bytes(), stream));
    }
    if (glyphs && atlas_.size() == 0) {  // once; stream-ordered before the first draw reading it
        atlas_ = DeviceBuffer<uint8_t>(size_t{font->width} * font->height);
        TVLM_CUDA_CHECK(cudaMemcpyAsync(atlas_.data(), font->sdf, atlas_.bytes(), cudaMemcpyHostToDevice, stream));
    }
    TVLM_CUDA_CHECK(cudaEventSynchronize(copied_[half_].get()));  // this staging buffer is free again
    if (staging_count_[half_] < total) {
        staging_[half_] = allocate_pinned(total * sizeof(gpu::OverlayShape));
        staging_count_[half_] = total;
    }
    // The scene's shapes with a gap for the links (the binning pass fills it), read by the
    // binning pass from this pinned memory (mapped: unified addressing).
    const size_t at = links ? links->at : shapes.size();
    auto* staged = static_cast<gpu::OverlayShape*>(staging_[half_].get());
    std::memcpy(staged, shapes.data(), at * sizeof(gpu::OverlayShape));
    std::memcpy(staged + at + link_slots, shapes.data() + at, (shapes.size() - at) * sizeof(gpu::OverlayShape));
    OverlayLinks device_links{};
    if (links)
        device_links = {.xy = links->xy,
                        .edges = links->edges,
                        .edge_count = links->edge_count,
                        .max_edges = links->max_edges,
                        .width = links->width,
                        .color = links->color,
                        .first = uint32_t(at)};
    counts_zeroed_ = false;  // until both passes are launched
    turn_ = (turn_ + 1) % 3;
    launch_overlay({.staged = staged,
                    .shapes = shapes_[half_].data(),
                    .shape_count = uint32_t(total),
                    .links = device_links,
                    .busy_counts = busy_counts_.data(),
                    .turn = turn_,
                    .counts = counts_[half_].data(),
                    .busy = busy_[half_].data(),
                    .lists = lists_[half_].data(),
                    .busy_bound = uint32_t(links ? tiles : std::min<uint64_t>(pairs, tiles)),
                    .frame = frame,
                    .pitch = pitch,
                    .width = width,
                    .height = height,
                    .half = format == Format::rgba16f,
                    .srgb = format == Format::rgba8_srgb,
                    .atlas = glyphs ? atlas_.data() : nullptr,
                    .atlas_width = font ? font->width : 0},
                   stream);
    counts_zeroed_ = true;  // the passes, all launched, return every count to zero
    TVLM_CUDA_CHECK(cudaEventRecord(copied_[half_].get(), stream));  // the binning read the staged shapes
}

}  // namespace tvlm
