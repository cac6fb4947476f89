#include "cuda_pipelines/cuda_video_texture.h"

#include <cstring>
#include <vector>

#include "cuda_pipelines/cuda_capture.h"
#include "cuda/cuda_check.h"
#include "engine/error.h"
#include "cuda/video/video_frames.h"

namespace tvlm {

CudaVideoTexture::CudaVideoTexture(uint32_t width, uint32_t height, ChangeDetection detection)
    : detection_(checked(detection)),
      grid_{width, height, 1},
      texture_(CudaArrayTexture::create(TextureDesc::sampled_2d(width, height, Format::rgba8_unorm))),
      mips_(texture_.mipmaps()),
      level0_(texture_.mipmaps().make_surface(0)),
      frame_(size_t{width} * height * 4),
      changed_(grid_.tile_count()),
      changed_host_(allocate_pinned(grid_.tile_count() * sizeof(uint32_t))),
      flags_copied_(make_event()) {}

void CudaVideoTexture::update(cudaStream_t stream) {
    if (updates_ == 0) {
        mips_.generate_from(frame_.data(), frame_pitch(), stream);
    } else {
        // One graph launch: the steps' own launches cost more host time than their GPU time
        // at 1080p (as separate launches a partial update cost more than the full chain).
        if (!update_graph_)
            update_graph_ = capture_graph([&](cudaStream_t capture) {
                update_changed_tiles(frame_.data(), frame_pitch(), level0_.get(), grid_.width, grid_.height,
                                     detection_.threshold, changed_.data(), capture);
                mips_.update_changed(changed_.data(), capture);
                TVLM_CUDA_CHECK(cudaMemcpyAsync(changed_host_.get(), changed_.data(), changed_.bytes(),
                                                cudaMemcpyDeviceToHost, capture));
            });
        TVLM_CUDA_CHECK(cudaGraphLaunch(update_graph_.get(), stream));
    }
    TVLM_CUDA_CHECK(cudaEventRecord(flags_copied_.get(), stream));
    ++updates_;
}

FrameChanges CudaVideoTexture::changes() const {
    if (updates_ == 0) throw Error("no frame yet: changes() reports the last update()");
    if (updates_ == 1) return plan_frame_changes({}, grid_, detection_);
    TVLM_CUDA_CHECK(cudaEventSynchronize(flags_copied_.get()));
    std::vector<uint32_t> changed(changed_.size());
    std::memcpy(changed.data(), changed_host_.get(), changed_.bytes());
    // The GPU updated exactly the flagged tiles, whatever their number, so the regions are
    // those tiles merged; a scene cut is still reported as one (whole_frame), as
    // VideoTexture reports it, for whoever reads the report (saliency from changes ignores
    // cuts).
    ChangeDetection every_tile = detection_;
    every_tile.whole_frame_above = 1.0;
    FrameChanges plan = plan_frame_changes(std::move(changed), grid_, every_tile);
    plan.whole_frame = double(plan.tiles_changed) > detection_.whole_frame_above * double(grid_.tile_count());
    return plan;
}

}  // namespace tvlm
