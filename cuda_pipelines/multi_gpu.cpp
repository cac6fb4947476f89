#include "cuda_pipelines/multi_gpu.h"

#include <string>

#include "cuda/cuda_check.h"
#include "cuda/cuda_device_guard.h"
#include "cuda_pipelines/cuda_frame_graph.h"
#include "engine/error.h"
#include "engine/sampling/patch_layouts.h"

namespace tvlm {

// One device's share: made, used and destroyed with its device current.
struct MultiGpuPipeline::Pipeline {
    int device;
    Shard shard;
    size_t frame_bytes;
    CudaArrayTexture texture;
    CudaBoxMips mips;
    CudaPatchSampler sampler;
    TextureObject object;
    DeviceBuffer<uint8_t> frames;
    DeviceBuffer<unsigned char> out;
    CudaStream stream;
    CudaFrameGraph graph;  // frames -> mips -> patches, one launch per batch

    Pipeline(int device_, Shard shard_, const MultiGpuDesc& d)
        : device(device_),
          shard(shard_),
          frame_bytes(size_t{d.width} * d.height * format_info(d.format).texel_bytes()),
          texture(CudaArrayTexture::create(TextureDesc::sampled_array(d.width, d.height, shard_.count, d.format))),
          mips(texture.mipmaps()),
          sampler(batch_layouts(std::vector<PatchLayout>(shard_.count, d.layout)), d.output),
          object(texture.mipmaps().make_texture_object(sampler.sampler_desc())),
          frames(frame_bytes * shard_.count),
          out(d.output.bytes(sampler_layout())),
          stream(make_stream()),
          graph(FrameGraphDesc{texture.mipmaps(), &mips, &sampler, object.get(), frames.data(), frame_bytes / d.height,
                               out.data(), out.bytes()}) {}
    ~Pipeline() { cudaSetDevice(device); }  // members are destroyed after this, on their device

    const PatchLayout& sampler_layout() const { return sampler.layout(); }
};

MultiGpuPipeline::MultiGpuPipeline(const MultiGpuDesc& desc) {
    if (desc.cuda_devices.empty()) throw Error("a multi-GPU pipeline needs at least one CUDA device");
    int count = 0;
    TVLM_CUDA_CHECK(cudaGetDeviceCount(&count));
    for (int d : desc.cuda_devices)
        if (d < 0 || d >= count)
            throw Error("CUDA device " + std::to_string(d) + " does not exist: this process sees " +
                        std::to_string(count) + " (CUDA_VISIBLE_DEVICES decides which)");
    shards_ = shard_batch(desc.batch, uint32_t(desc.cuda_devices.size()));
    image_output_bytes_ = desc.output.bytes(desc.layout);
    for (size_t s = 0; s < shards_.size(); ++s) {
        if (shards_[s].count == 0) {
            pipelines_.push_back(nullptr);  // fewer images than devices: this one idles
            continue;
        }
        const DeviceGuard guard(desc.cuda_devices[s]);
        pipelines_.push_back(std::make_unique<Pipeline>(desc.cuda_devices[s], shards_[s], desc));
    }
}

MultiGpuPipeline::~MultiGpuPipeline() {
    int previous = 0;
    cudaGetDevice(&previous);
    pipelines_.clear();
    cudaSetDevice(previous);
}

void* MultiGpuPipeline::frames(size_t shard) const {
    if (shard >= pipelines_.size()) throw Error("shard " + std::to_string(shard) + " does not exist");
    return pipelines_[shard] ? pipelines_[shard]->frames.data() : nullptr;
}

const void* MultiGpuPipeline::patches(size_t shard) const {
    if (shard >= pipelines_.size()) throw Error("shard " + std::to_string(shard) + " does not exist");
    return pipelines_[shard] ? pipelines_[shard]->out.data() : nullptr;
}

// One graph launch per device (a few microseconds of host time each), so the last device
// starts its batch almost as early as the first: with a launch per step the host's
// enqueueing skewed the devices' starts by tens of microseconds a batch.
void MultiGpuPipeline::run() {
    for (const auto& p : pipelines_) {
        if (!p) continue;
        const DeviceGuard guard(p->device);
        p->graph.launch(p->stream.get());
    }
}

void MultiGpuPipeline::synchronize() const {
    for (const auto& p : pipelines_)
        if (p) TVLM_CUDA_CHECK(cudaStreamSynchronize(p->stream.get()));
}

void MultiGpuPipeline::gather(void* dst, int device) const {
    if (!dst) throw Error("gather: no destination buffer");
    for (const auto& p : pipelines_) {
        if (!p) continue;
        const DeviceGuard guard(p->device);
        // A peer copy where the GPUs have a path; the driver stages it through the host
        // otherwise. Ordered after the shard's own work on its stream.
        TVLM_CUDA_CHECK(cudaMemcpyPeerAsync(static_cast<unsigned char*>(dst) + p->shard.first * image_output_bytes_,
                                            device, p->out.data(), p->device, p->out.bytes(), p->stream.get()));
    }
    synchronize();
}

}  // namespace tvlm
