#pragma once
// An image processor's GPU work for images of one size and dtype (python/texturevlm/
// processors) in one call, whatever the number of images; or, for the software filters, of
// any size (a resizer of shape 0 x 0: each run gives its images' size), which a server's
// first sight of a size runs on instead of making a resizer for a size it may never see again:
//  - texture filter: one box-mip launch over the tensors themselves (cuda_tensor_mips.h)
//    writes the levels the sampler reads straight into a texture kept between calls (the
//    finer levels are computed and dropped: a 4096^2 image shrunk to 224^2 puts 256^2 and
//    128^2 into the texture), then the fused resize (cuda/processors/image_resize.h) takes one
//    texture sample per output pixel: two launches a call (three where nothing is
//    skipped: level 0 is copied in and the texture builds its own mips; two again for a
//    two-level chain of uint8 images of even sides, whose copy writes level 1 too);
//  - bicubic and bilinear filters: torch's antialiased resize straight from the tensors in
//    two passes (across the rows into scratch kept between calls, then down the columns,
//    fused with the rest).
// Images are device pointers sharing one view (dtype, strides, channels): the tensors of
// a list or the images of a batch, 32 per launch (ImageList), so a list of 8 tensors costs
// the launches of one batch. Allocates at construction (the texture filter), and the
// software filters' rows and span tables at their first run of a larger target, from a pool
// in stream order (cuda/pooled_buffer.h): runs, and dropping a software resizer, never wait for the
// device. The texture
// and the scratch hold a run's data until its kernels ran: a run on another stream than the
// last run's is ordered after the work queued on that stream (not inside a CUDA graph
// capture, where the caller orders them), and threads each use resizers of their own. A run
// that repeats another's arguments replays its launches as one CUDA graph. Move-only.
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cuda_pipelines/cuda_pyramid.h"
#include "cuda_pipelines/replayed_launches.h"
#include "cuda/cuda_handle.h"
#include "cuda/device_buffer.h"
#include "cuda/pooled_buffer.h"
#include "cuda/processors/image_resize.h"
#include "cuda/tensors/tensor_texels.h"
#include "engine/mips/mip_filter.h"

namespace tvlm {

enum class ResizeFilter : uint8_t { texture, bicubic, bilinear };

struct ResizerShape {
    ResizeFilter filter = ResizeFilter::texture;
    TensorDtype dtype = TensorDtype::u8;  // the images' (bfloat16: no skipped levels)
    uint32_t channels = 3;
    uint32_t width = 0, height = 0;  // the images' (bicubic and bilinear: 0 x 0 for any size)
    uint32_t images = 1;             // the most one run takes
    uint32_t skipped_levels = 0;     // texture: box levels computed from the tensors
    uint32_t texture_levels = 1;     // texture: its levels, from level skipped_levels on
};

class CudaImageResizer {
public:
    // On the current CUDA device. Throws Error for an empty shape, levels the chain does not
    // have, or skipped levels of a bfloat16 image (no box format of its own).
    explicit CudaImageResizer(const ResizerShape& shape);
    CudaImageResizer(CudaImageResizer&&) noexcept = default;
    CudaImageResizer& operator=(CudaImageResizer&&) noexcept = delete;  // its buffers' frees are ordered by ~
    // Frees its buffers behind its last run without waiting for it (a cache may drop a
    // resizer while a server's work is queued: cudaFree would wait for all of it).
    ~CudaImageResizer();

    // Whether a run repeating an earlier run's arguments replays it as one graph (the
    // default), or every run launches directly: for runs whose arguments will not repeat
    // (an image written at a new place of each call's output), where keeping their keys
    // would capture graphs that are never replayed, and a replay costs more host time than
    // the launches it stands for.
    enum class Replay { repeated, never };

    // target.images images of `size` (image i at images[i], read through `view`'s dtype,
    // strides and channels; view.data unused) resized into `target` from its first_layer 0.
    // `size` is the shape's, or any for a resizer of any size. Throws Error, launching
    // nothing, for a count that is not target.images or exceeds the shape's, a null image, a
    // view or size unlike the shape, or a target check_resize_target refuses.
    void run(const TensorView& view, Extent2D size, std::span<const void* const> images, const ResizeTarget& target,
             cudaStream_t stream, Replay replay = Replay::repeated) const;
    // run()'s refusals, without launching: for callers that run several resizers at once
    // (stream_branches.h) and launch none where one would refuse.
    void check(const TensorView& view, Extent2D size, std::span<const void* const> images,
               const ResizeTarget& target) const;
    // run() of arguments check() passed: such callers check every run once, before launching any.
    void launch(const TensorView& view, Extent2D size, std::span<const void* const> images, const ResizeTarget& target,
                cudaStream_t stream, Replay replay = Replay::repeated) const;

    const ResizerShape& shape() const { return shape_; }
    // Whether it takes images of any size (a shape of width and height 0; not the texture filter).
    bool any_size() const { return shape_.width == 0; }
    // Runs kept as graphs (a repeated run replays one).
    size_t replay_graphs() const { return replayed_->graphs(); }

private:
    // Every value a run's launches read: equal keys make equal launches (ReplayedLaunches).
    static ReplayedLaunches::Key call_key(const TensorView& view, Extent2D size, std::span<const void* const> images,
                                          const ResizeTarget& target);
    void fill_texture(const TensorView& view, std::span<const void* const> images, cudaStream_t stream) const;
    void order_after_last_run(cudaStream_t stream) const;

    ResizerShape shape_;
    std::optional<CudaPyramid> texture_;
    // Whether the tensor chain writes the texture's levels (levels skipped); if not, level
    // 0 is copied in and the texture builds its mips.
    bool chain_fills_texture_ = false;
    // Whether the level-0 copy also writes level 1 (uint8 images of even sides, two levels).
    bool writes_level_1_ = false;
    DeviceBuffer<unsigned char> scratch_;        // levels a later pass of the chain reads
    std::vector<TensorView> levels_;             // chain levels 1.. of every image; data only where stored
    std::vector<cudaSurfaceObject_t> surfaces_;  // by chain level: the texture's, 0 below it
    // Bicubic and bilinear: the row pass's results, sized by the largest target run so far.
    mutable PooledBuffer software_rows_;
    // The spans and weights of the last windows run (a window: the source size, the resized
    // size, the crop), each in a buffer of its own: a call that
    // resizes its images to two windows (InternVL's tiles and thumbnail, LLaVA-OneVision's
    // tiles and base image) writes neither again. A window's tables are computed into the
    // least recently used buffer (grown where they outgrow it).
    struct SpanTables {
        std::array<uint32_t, 8> window{};
        PooledBuffer buffer;
        uint64_t generation = 0;  // this buffer's tables' rewrite (0: none yet)
        uint64_t used = 0;        // the run that last used them
    };
    mutable std::array<SpanTables, 4> tables_;
    mutable uint64_t runs_ = 0, tables_written_ = 0;  // counters for SpanTables' fields
    // The tables of `window` (computed on this run where `written` comes back false).
    SpanTables& tables_for(const std::array<uint32_t, 8>& window, size_t bytes, bool& written,
                           cudaStream_t stream) const;
    // `buffer` replaced by one of `bytes`, the old one freed behind the runs that read it.
    void regrow(PooledBuffer& buffer, size_t bytes, cudaStream_t stream) const;
    // Records that the run just queued on `stream` is the last (the destructor's frees wait for it).
    void mark_done(cudaStream_t stream) const;
    // The stream of the last run, and the event a run on another stream waits on: the
    // texture and scratch are one set for all runs, so a run is ordered after the last.
    mutable std::optional<cudaStream_t> last_stream_;
    CudaEvent handoff_ = make_event();
    // The end of the last run, and whether one ran (outside a capture).
    CudaEvent done_ = make_event();
    mutable bool ran_ = false;
    int device_ = 0;
    // A run's launches replayed as one graph once a run repeats (a processor's usual call);
    // held by pointer so the resizer stays movable.
    std::unique_ptr<ReplayedLaunches> replayed_ = std::make_unique<ReplayedLaunches>();
};

}  // namespace tvlm
