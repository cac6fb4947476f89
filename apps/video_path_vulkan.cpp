// tvlm video's portable path: CPU decoding straight into a VideoTexture's staging buffer.
#include <cstring>

#include "engine/error.h"
#include "engine/core/host_buffer.h"
#include "engine/video/video_texture.h"
#include "apps/video_paths.h"
#include "engine/sampling/vulkan_patch_sampler.h"

namespace tvlm {

namespace {

class VulkanVideoPath final : public VideoPath {
public:
    VulkanVideoPath(Context& context, VideoDecoder decoder, Format format, const ChangeDetection& detection)
        : context_(context),
          decoder_(std::move(decoder)),
          texture_(context, decoder_.info().width, decoder_.info().height, format, detection) {}

    const VideoInfo& info() const override { return decoder_.info(); }
    const TileGrid& grid() const override { return texture_.grid(); }

    std::optional<FrameChanges> next(std::vector<uint8_t>* rgba) override {
        std::span<std::byte> staging = texture_.next_frame();
        if (!decoder_.next({reinterpret_cast<uint8_t*>(staging.data()), staging.size()})) return std::nullopt;
        if (rgba)
            rgba->assign(reinterpret_cast<const uint8_t*>(staging.data()),
                         reinterpret_cast<const uint8_t*>(staging.data()) + staging.size());
        return static_cast<FrameChanges>(texture_.update());
    }

    std::vector<float> sample(const PatchLayout& layout, uint32_t channels) override {
        if (!sampler_ || !sampler_->layout().same_sampling(layout)) {
            sampler_.emplace(context_, layout, PatchOutput{.channels = channels});
            output_.emplace(context_.physical_device(), context_.device(), sampler_->output().bytes(layout),
                            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        }
        context_.queue().wait(sampler_->sample(texture_.texture(), output_->handle(), 0, output_->size()));
        std::vector<float> values(output_->size() / sizeof(float));
        std::memcpy(values.data(), output_->data(), output_->size());
        return values;
    }

    std::string where() const override { return "Vulkan compute on " + context_.device_info().name; }

private:
    Context& context_;
    VideoDecoder decoder_;
    VideoTexture texture_;
    std::optional<VulkanPatchSampler> sampler_;
    std::optional<HostBuffer> output_;
};

}  // namespace

std::unique_ptr<VideoPath> vulkan_video_path(Context& context, VideoDecoder decoder, Format format,
                                             const ChangeDetection& detection) {
    return std::make_unique<VulkanVideoPath>(context, std::move(decoder), format, detection);
}

#ifndef TVLM_HAVE_CUDA
std::unique_ptr<VideoPath> nvdec_video_path(Context&, const std::string&, const ChangeDetection&, double) {
    throw Error("this tvlm was built without CUDA: NVDEC needs nvcc at configure time and an NVIDIA GPU");
}
#endif

}  // namespace tvlm
