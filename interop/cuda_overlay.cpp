#include "cuda_overlay.h"

#include <cstring>
#include <string>

#include "cuda_check.h"
#include "error.h"
#include "overlay.h"
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

void CudaOverlay::draw(std::span<const gpu::OverlayShape> shapes, uint8_t* frame, size_t pitch, uint32_t width,
                       uint32_t height, bool srgb, cudaStream_t stream) {
    if (!frame) throw Error("CudaOverlay::draw: no frame (a null pointer)");
    if (width == 0 || height == 0) throw Error("CudaOverlay::draw: an empty frame");
    if (pitch % 4 || pitch < size_t{width} * 4)
        throw Error("CudaOverlay::draw: rows " + std::to_string(pitch) + " bytes apart: RGBA8 rows need at least " +
                    std::to_string(size_t{width} * 4) + " bytes, a multiple of 4");
    for (const gpu::OverlayShape& s : shapes)
        if (s.kind == TVLM_SHAPE_GLYPH)
            throw Error("labels are drawn by the Vulkan and CPU overlay renderers, not yet by CUDA: draw the labels on "
                        "a host copy, or leave them out of CUDA frames' scenes");
    const uint64_t pairs = overlay_tile_pairs(shapes, width, height);
    const size_t tiles = size_t((width + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE) *
                         ((height + TVLM_OVERLAY_TILE - 1) / TVLM_OVERLAY_TILE);
    ensure(shapes_, shapes.size(), stream);
    ensure(counts_, tiles + 1, stream);
    ensure(scan_scratch_, overlay_scan_scratch_bytes(uint32_t(tiles)), stream);
    ensure(offsets_, tiles + 1, stream);
    ensure(cursors_, tiles, stream);
    ensure(lists_, size_t(pairs), stream);
    if (!shapes.empty()) {
        TVLM_CUDA_CHECK(cudaEventSynchronize(copied_.handle()));  // staging_ is free again
        if (staging_count_ < shapes.size()) {
            staging_ = allocate_pinned(shapes.size_bytes());
            staging_count_ = shapes.size();
        }
        std::memcpy(staging_.handle(), shapes.data(), shapes.size_bytes());
        TVLM_CUDA_CHECK(cudaMemcpyAsync(shapes_.data(), staging_.handle(), shapes.size_bytes(), cudaMemcpyHostToDevice, stream));
        TVLM_CUDA_CHECK(cudaEventRecord(copied_.handle(), stream));
    }
    launch_overlay({shapes_.data(), uint32_t(shapes.size()), counts_.data(), offsets_.data(), cursors_.data(), lists_.data(),
                    frame, pitch, width, height, srgb, scan_scratch_.data(), scan_scratch_.size()},
                   stream);
}

}  // namespace tvlm
