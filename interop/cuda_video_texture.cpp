#include "cuda_video_texture.h"

#include <cstring>
#include <vector>

#include "cuda_check.h"
#include "video_frames.h"

namespace tvlm {

CudaVideoTexture::CudaVideoTexture(uint32_t width, uint32_t height, ChangeDetection detection)
    : detection_(checked(detection)),
      grid_{width, height, 1},
      texture_(CudaArrayTexture::create(TextureDesc::sampled_2d(width, height, Format::rgba8_unorm))),
      mips_(texture_.mipmaps()),
      level0_(texture_.mipmaps().make_surface(0)),
      frame_(size_t{width} * height * 4),
      changed_(grid_.tile_count()),
      changed_host_(allocate_pinned(grid_.tile_count() * sizeof(uint32_t))) {}

FrameChanges CudaVideoTexture::update(cudaStream_t stream) {
    std::vector<uint32_t> changed;
    if (filled_) {
        find_changed_tiles(frame_.data(), frame_pitch(), level0_.handle(), grid_.width, grid_.height, detection_.threshold,
                           changed_.data(), stream);
        TVLM_CUDA_CHECK(cudaMemcpyAsync(changed_host_.handle(), changed_.data(), changed_.bytes(), cudaMemcpyDeviceToHost,
                                        stream));
        TVLM_CUDA_CHECK(cudaStreamSynchronize(stream));
        changed.resize(changed_.size());
        std::memcpy(changed.data(), changed_host_.handle(), changed_.bytes());
    }
    FrameChanges plan = plan_frame_changes(std::move(changed), grid_, detection_);
    if (plan.whole_frame) {
        mips_.generate_from(frame_.data(), frame_pitch(), stream);
    } else {
        const cudaArray_t level0 = texture_.mipmaps().level(0);
        for (const DirtyRegion& r : plan.regions) {
            TVLM_CUDA_CHECK(cudaMemcpy2DToArrayAsync(level0, size_t{r.x} * 4, r.y,
                                                     frame_.data() + size_t{r.y} * frame_pitch() + size_t{r.x} * 4,
                                                     frame_pitch(), size_t{r.width} * 4, r.height,
                                                     cudaMemcpyDeviceToDevice, stream));
            mips_.update(r, stream);
        }
    }
    filled_ = true;
    return plan;
}

}  // namespace tvlm
