#pragma once
// A batch split over several GPUs in one process (issue 21): one CUDA pipeline per listed
// device (a texture of its shard's images, box mips, the patch sampler, its own stream),
// each shard's frames read from its own device's memory, each shard's patches written
// there; gather() copies them into one buffer on one device (peer copies where the GPUs
// allow them, through the host otherwise). Contiguous shards (shard_batch): image b's
// patches are the same as on one GPU, bit for bit.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "cuda_pipelines/cuda_array_texture.h"
#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/cuda_handle.h"
#include "cuda_pipelines/cuda_patch_sampler.h"
#include "cuda/device_buffer.h"
#include "engine/sampling/patch.h"
#include "engine/shards.h"
#include "engine/textures/texture_desc.h"

namespace tvlm {

struct MultiGpuDesc {
    std::vector<int> cuda_devices;  // one pipeline each, in order (the same device may repeat)
    uint32_t width = 0, height = 0, batch = 0;
    Format format = Format::rgba8_unorm;
    PatchLayout layout;  // one image's layout: every image is sampled with it
    PatchOutput output;
};

class MultiGpuPipeline {
public:
    // Allocates each pipeline on its device. Throws Error for no devices, a device CUDA
    // does not have, or what the texture and sampler refuse (sizes, formats, the layout).
    explicit MultiGpuPipeline(const MultiGpuDesc& desc);
    MultiGpuPipeline(const MultiGpuPipeline&) = delete;
    MultiGpuPipeline& operator=(const MultiGpuPipeline&) = delete;
    ~MultiGpuPipeline();

    const std::vector<Shard>& shards() const { return shards_; }
    // Where shard s's frames go: its images' texels, tight rows, one after another, in the
    // memory of device cuda_devices[s] (a decoder or a data loader writes there).
    void* frames(size_t shard) const;
    // Enqueues every shard's frames -> mips -> patches on its device's stream; no host wait.
    void run();
    // Waits for every device.
    void synchronize() const;
    // Shard s's patches [count, N, C, P, P] on its device (valid after synchronize()).
    const void* patches(size_t shard) const;
    size_t patch_bytes_per_image() const { return image_output_bytes_; }
    // Every shard's patches, in batch order, into `dst` on CUDA device `device`
    // (batch * patch_bytes_per_image() bytes); waits for the copies.
    void gather(void* dst, int device) const;

private:
    struct Pipeline;
    std::vector<Shard> shards_;
    std::vector<std::unique_ptr<Pipeline>> pipelines_;
    size_t image_output_bytes_ = 0;
};

}  // namespace tvlm
