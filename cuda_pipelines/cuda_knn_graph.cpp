#include "cuda_pipelines/cuda_knn_graph.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "cuda/cuda_check.h"
#include "engine/error.h"
#include "shaders/shader_params.h"

namespace tvlm {

namespace {

constexpr size_t kMaxPoints = size_t{1} << 24;
constexpr size_t kStatsWords = sizeof(KnnFrameStats) / sizeof(uint32_t);
constexpr size_t kPointBytes = 2 * sizeof(float) + sizeof(uint64_t);  // x, y and a track id

uint32_t power_of_two_at_least(size_t n) {
    uint32_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

// Whether `buffer` holds fewer than `count` elements (at least one).
template <class T>
bool short_of(const DeviceBuffer<T>& buffer, size_t count) {
    return buffer.size() < std::max<size_t>(count, 1);
}

template <class T>
void ensure(DeviceBuffer<T>& buffer, size_t count) {
    if (short_of(buffer, count)) buffer = DeviceBuffer<T>(std::max<size_t>(count, 1));
}

// Grows `buffer` keeping what it holds: the last frame's links stay found where the table
// that holds them was built (its capacity is recorded on the device). The new buffer is
// zeroed first: only a prefix of the old one was written, and the next growth copies this
// one whole, so every byte it holds must be defined (compute-sanitizer's initcheck).
template <class T>
void ensure_keeping(DeviceBuffer<T>& buffer, size_t count) {
    if (!short_of(buffer, count)) return;
    DeviceBuffer<T> bigger(std::max<size_t>(count, 1));
    TVLM_CUDA_CHECK(cudaMemsetAsync(bigger.data(), 0, bigger.bytes(), cudaStreamPerThread));
    if (buffer.size())
        TVLM_CUDA_CHECK(cudaMemcpyAsync(bigger.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToDevice,
                                        cudaStreamPerThread));
    TVLM_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));  // done before any stream reads `bigger`
    buffer = std::move(bigger);
}

}  // namespace

CudaKnnGraph::CudaKnnGraph(KnnOptions options) : options_(options) {
    if (options.k == 0) throw Error("a KNN graph needs k >= 1 neighbours per point");
    if (uint64_t{options.k} + options.hysteresis > TVLM_KNN_MAX)
        throw Error(
            "the CUDA KNN graph keeps at most " + std::to_string(TVLM_KNN_MAX) +
            " neighbours per point, not k + hysteresis = " + std::to_string(uint64_t{options.k} + options.hysteresis) +
            ": lower either, or use KnnGraph on the host");
    if (!(options.max_dy >= 0)) throw Error("a KNN graph's max_dy must be >= 0 (infinity: no cap)");
    state_ = DeviceBuffer<KnnDeviceState>(1);
    const KnnDeviceState initial{};
    copy_to_device_now(state_.data(), &initial, sizeof initial);
    stats_ = allocate_pinned(sizeof(KnnFrameStats));
    *static_cast<KnnFrameStats*>(stats_.get()) = KnnFrameStats{};
}

void CudaKnnGraph::grow(uint32_t count, uint32_t keep, cudaStream_t stream) {
    const size_t slots = size_t(count) * keep;
    track_capacity_ = power_of_two_at_least(2 * size_t(count));
    zeroed_words_ = kStatsWords + track_capacity_ + (count + 1) + count + count + slots;
    const uint32_t table_capacity = power_of_two_at_least(2 * slots);
    const bool capped = options_.max_degree != 0;
    const size_t point_bytes = size_t(count) * kPointBytes;
    const bool grows = short_of(points_, point_bytes) || short_of(zeroed_, zeroed_words_) ||
                       short_of(nearest_, slots) || short_of(offsets_, count + 1) || short_of(unsorted_links_, slots) ||
                       short_of(frame_links_, slots) || short_of(pairs_[0], slots) ||
                       short_of(tables_[0], table_capacity) ||
                       (capped && (short_of(capped_, slots) || short_of(keys_, slots))) ||
                       scratch_for_ != std::pair{count, keep};
    if (!grows) return;
    // The buffers may still be read by the last update (on its stream) or this stream's work.
    if (stream_) TVLM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
    ensure(points_, point_bytes);
    ensure(zeroed_, zeroed_words_);
    ensure(nearest_, slots);
    ensure(offsets_, count + 1);
    ensure(unsorted_links_, slots);
    ensure(frame_links_, slots);
    if (capped) {
        ensure(capped_, slots);
        for (DeviceBuffer<uint32_t>* b : {&keys_, &keys_sorted_, &order_, &order_sorted_}) ensure(*b, slots);
    }
    for (int t = 0; t < 2; ++t) {
        ensure_keeping(pairs_[t], slots);
        ensure_keeping(tables_[t], table_capacity);
    }
    if (scratch_for_ != std::pair{count, keep}) {
        ensure(scratch_, knn_scratch_bytes(count, keep));
        scratch_for_ = {count, keep};
    }
}

void CudaKnnGraph::update(std::span<const KnnPoint> points, cudaStream_t stream) {
    if (points.size() > kMaxPoints)
        throw Error("a KNN graph of " + std::to_string(points.size()) + " points: the CUDA graph takes at most " +
                    std::to_string(kMaxPoints));
    for (size_t i = 0; i < points.size(); ++i)
        if (!std::isfinite(points[i].x) || !std::isfinite(points[i].y))
            throw Error("KNN point " + std::to_string(i) + " has a NaN or infinite coordinate");
    const auto count = uint32_t(points.size());
    const uint32_t keep = std::min(options_.k + options_.hysteresis, count ? count - 1 : 0u);
    grow(count, keep, stream);
    const size_t bytes = size_t(count) * kPointBytes;
    slot_ ^= 1;
    TVLM_CUDA_CHECK(cudaEventSynchronize(copied_[slot_].get()));  // this staging buffer is free again
    if (staging_bytes_[slot_] < bytes) {
        staging_[slot_] = allocate_pinned(bytes);
        staging_bytes_[slot_] = bytes;
    }
    auto* xy = static_cast<float*>(staging_[slot_].get());
    auto* tracks = reinterpret_cast<uint64_t*>(xy + 2 * size_t(count));
    for (size_t i = 0; i < count; ++i)
        xy[2 * i] = points[i].x, xy[2 * i + 1] = points[i].y, tracks[i] = points[i].track;
    if (bytes) TVLM_CUDA_CHECK(cudaMemcpyAsync(points_.data(), xy, bytes, cudaMemcpyHostToDevice, stream));
    TVLM_CUDA_CHECK(cudaEventRecord(copied_[slot_].get(), stream));
    uint32_t* zeroed = zeroed_.data();
    uint32_t* track_table = zeroed + kStatsWords;
    uint32_t* owned = track_table + track_capacity_;
    uint32_t* cursor = owned + count + 1;
    uint32_t* degree = cursor + count;
    auto* device_xy = reinterpret_cast<const float*>(points_.data());
    launch_knn_graph({.count = count,
                      .keep = keep,
                      .xy = device_xy,
                      .tracks = reinterpret_cast<const uint64_t*>(device_xy + 2 * size_t(count)),
                      .k = options_.k,
                      .hysteresis = options_.hysteresis,
                      .max_dy = options_.max_dy,
                      .max_degree = options_.max_degree,
                      .zeroed = zeroed,
                      .zeroed_words = zeroed_words_,
                      .stats = reinterpret_cast<KnnFrameStats*>(zeroed),
                      .track_table = track_table,
                      .track_capacity = track_capacity_,
                      .owned = owned,
                      .cursor = cursor,
                      .degree = degree,
                      .flags = degree + count,
                      .nearest = nearest_.data(),
                      .offsets = offsets_.data(),
                      .frame_links = frame_links_.data(),
                      .unsorted_links = unsorted_links_.data(),
                      .capped = capped_.data(),
                      .keys = keys_.data(),
                      .keys_sorted = keys_sorted_.data(),
                      .order = order_.data(),
                      .order_sorted = order_sorted_.data(),
                      .pairs = {pairs_[0].data(), pairs_[1].data()},
                      .tables = {tables_[0].data(), tables_[1].data()},
                      .table_capacity = uint32_t(tables_[0].size()),
                      .state = state_.data(),
                      .scratch = scratch_.data(),
                      .scratch_bytes = scratch_.size()},
                     stream);
    TVLM_CUDA_CHECK(cudaMemcpyAsync(stats_.get(), zeroed, sizeof(KnnFrameStats), cudaMemcpyDeviceToHost, stream));
    TVLM_CUDA_CHECK(cudaEventRecord(done_.get(), stream));
    count_ = count;
    keep_ = keep;
    stream_ = stream;
}

const KnnFrameStats& CudaKnnGraph::finished() {
    TVLM_CUDA_CHECK(cudaEventSynchronize(done_.get()));
    const auto& stats = *static_cast<const KnnFrameStats*>(stats_.get());
    if (stats.bad_point)
        throw Error("KNN point " + std::to_string(~stats.bad_point) + " has a NaN or infinite coordinate");
    if (stats.repeated_track) {
        const uint32_t i = ~stats.repeated_track;
        const auto* tracks = reinterpret_cast<const uint64_t*>(static_cast<const float*>(staging_[slot_].get()) +
                                                               2 * size_t(count_));
        throw Error("KNN point " + std::to_string(i) + " repeats track id " + std::to_string(tracks[i]) +
                    ": track ids are unique within a frame (that frame has no links; the graph is as before it)");
    }
    return stats;
}

std::vector<KnnEdge> CudaKnnGraph::edges() {
    const uint32_t links = finished().edges;
    std::vector<KnnEdge> edges(links);
    static_assert(sizeof(KnnEdge) == sizeof(uint2));
    if (links) {
        TVLM_CUDA_CHECK(cudaMemcpyAsync(edges.data(), options_.max_degree ? capped_.data() : frame_links_.data(),
                                        links * sizeof(uint2), cudaMemcpyDeviceToHost, stream_));
        TVLM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    return edges;
}

size_t CudaKnnGraph::changes() { return finished().changes; }
size_t CudaKnnGraph::edge_count() { return finished().edges; }

OverlayDeviceLinks CudaKnnGraph::links(size_t at, float width, OverlayColor color) const {
    return {.xy = reinterpret_cast<const float*>(points_.data()),
            .edges = options_.max_degree ? capped_.data() : frame_links_.data(),
            .edge_count = &reinterpret_cast<const KnnFrameStats*>(zeroed_.data())->edges,
            .max_edges = uint32_t(size_t(count_) * keep_),
            .width = width,
            .color = color.word(),
            .at = at};
}

}  // namespace tvlm
