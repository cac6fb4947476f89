#pragma once
// Where `tvlm video` decodes and samples: the CPU decoder into a Vulkan VideoTexture and
// Vulkan compute (any GPU, lavapipe too), or NVDEC into a CudaVideoTexture and the CUDA
// texture-unit sampler (NVIDIA; frames never leave the GPU). One interface, so the command
// reads the same either way.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/context.h"
#include "engine/sampling/patch.h"
#include "engine/video/changed_tiles.h"
#include "engine/video_files/video_decoder.h"

namespace tvlm {

class VideoPath {
public:
    virtual ~VideoPath() = default;
    virtual const VideoInfo& info() const = 0;
    virtual const TileGrid& grid() const = 0;
    // Decodes the next frame into the texture; nullopt at the end. With `rgba`, the frame
    // as RGBA8 rows too (for --viz-video).
    virtual std::optional<FrameChanges> next(std::vector<uint8_t>* rgba) = 0;
    // The current frame's patches for `layout`, float32 [N, C, P, P], on the host.
    virtual std::vector<float> sample(const PatchLayout& layout, uint32_t channels) = 0;
    // "Vulkan compute on <device>" or "CUDA on <device>".
    virtual std::string where() const = 0;
};

// CPU decoding, VideoTexture, VulkanPatchSampler.
std::unique_ptr<VideoPath> vulkan_video_path(Context& context, VideoDecoder decoder, Format format,
                                             const ChangeDetection& detection);
// NVDEC, CudaVideoTexture, CudaPatchSampler on the CUDA device that is `context`'s Vulkan
// device; `stall_timeout` as VideoDecoderOptions'. Throws Error where CUDA is not built or
// NVDEC cannot run (the reason says which).
std::unique_ptr<VideoPath> nvdec_video_path(Context& context, const std::string& source,
                                            const ChangeDetection& detection, double stall_timeout);

}  // namespace tvlm
