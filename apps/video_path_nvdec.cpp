// tvlm video's NVIDIA path: NVDEC into CUDA memory, NV12 -> RGBA8 into a CudaVideoTexture
// (changed tiles decided on the GPU), the texture-unit sampler; only the patches (and the
// frame, for --viz-video) come back to the host.
#include <cstring>

#include "cuda/cuda_check.h"
#include "interop/cuda_link.h"
#include "cuda_pipelines/cuda_patch_sampler.h"
#include "cuda_pipelines/cuda_video_texture.h"
#include "cuda/device_buffer.h"
#include "cuda/video/video_frames.h"
#include "apps/video_paths.h"

namespace tvlm {

namespace {

class NvdecVideoPath final : public VideoPath {
public:
    NvdecVideoPath(Context& context, const std::string& source, const ChangeDetection& detection, double stall_timeout)
        : link_(context),
          name_(context.device_info().name),
          decoder_(source, VideoDecoderOptions{.decode = VideoDecode::nvdec,
                                               .cuda_device = link_.cuda_device(),
                                               .stall_timeout = stall_timeout}),
          texture_(decoder_.info().width, decoder_.info().height, detection) {}

    const VideoInfo& info() const override { return decoder_.info(); }
    const TileGrid& grid() const override { return texture_.grid(); }

    std::optional<FrameChanges> next(std::vector<uint8_t>* rgba) override {
        DeviceFrame f;
        if (!decoder_.next(f)) return std::nullopt;
        // The legacy default stream: ordered after NVDEC's copies (VideoDecoder's DeviceFrame).
        nv12_to_rgba8(f, texture_.frame(), texture_.frame_pitch(), nullptr);
        if (rgba) {
            rgba->resize(texture_.frame_pitch() * f.height);
            TVLM_CUDA_CHECK(cudaMemcpy(rgba->data(), texture_.frame(), rgba->size(), cudaMemcpyDeviceToHost));
        }
        texture_.update(nullptr);
        return texture_.changes();
    }

    std::vector<float> sample(const PatchLayout& layout, uint32_t channels) override {
        if (!sampler_ || !sampler_->layout().same_sampling(layout)) {
            sampler_.emplace(layout, PatchOutput{.channels = channels});
            object_.emplace(texture_.mipmaps().make_texture_object(sampler_->sampler_desc()));
            output_ = DeviceBuffer<unsigned char>(PatchOutput{.channels = channels}.bytes(layout));
        }
        sampler_->sample(texture_.mipmaps(), object_->get(), output_.data(), output_.bytes(), nullptr);
        std::vector<float> values(output_.bytes() / sizeof(float));
        TVLM_CUDA_CHECK(cudaMemcpy(values.data(), output_.data(), output_.bytes(), cudaMemcpyDeviceToHost));
        return values;
    }

    std::string where() const override { return "NVDEC and CUDA on " + name_; }

private:
    CudaLink link_;  // selects the CUDA device that is the Vulkan device, before anything CUDA
    std::string name_;
    VideoDecoder decoder_;
    CudaVideoTexture texture_;
    std::optional<CudaPatchSampler> sampler_;
    std::optional<TextureObject> object_;
    DeviceBuffer<unsigned char> output_;
};

}  // namespace

std::unique_ptr<VideoPath> nvdec_video_path(Context& context, const std::string& source,
                                            const ChangeDetection& detection, double stall_timeout) {
    return std::make_unique<NvdecVideoPath>(context, source, detection, stall_timeout);
}

}  // namespace tvlm
