// tvlm bench handover: what handing a frame to CUDA costs per frame on each path, wall
// time, the producer's work empty and the CUDA work one sample, so only the hand-over
// shows. The floor is the same CUDA kernel launched per frame with nothing to hand over.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "bench_gpu.h"
#include "bench_timing.h"
#include "cuda_array_texture.h"
#include "cuda_check.h"
#include "cuda_gl_texture.h"
#include "device_buffer.h"
#include "egl_context.h"
#include "frame_ring.h"
#include "gl_texture.h"
#include "texture_reads.h"

namespace tvlm {

std::vector<Row> bench_handover(BenchGpu& gpu) {
    constexpr int kFrames = 400;
    Context& context = gpu.context;
    const cudaStream_t stream = gpu.stream;
    const TextureDesc desc = TextureDesc::sampled_2d(16, 16, Format::rgba8_unorm);
    const std::string job = "hand a 16x16 RGBA8 texture to a 1-sample CUDA kernel, per frame";
    DeviceBuffer<float4> out(1);
    const auto one_sample = [&](cudaTextureObject_t object, uint64_t f) {
        sample_points({object, {1, 0.0f, static_cast<uint32_t>(f)}, out.data()}, stream);
    };
    const auto sync_cuda = [&] { TVLM_CUDA_CHECK(cudaStreamSynchronize(stream)); };
    std::vector<Row> rows;

    // Floor: the kernel alone, launched per frame.
    const CudaArrayTexture own = CudaArrayTexture::create(desc);
    const TextureObject own_object = own.mipmaps().make_texture_object();
    const Timing floor = time_frames([&](uint64_t f) { one_sample(own_object.handle(), f); }, sync_cuda, kFrames);
    rows.push_back({job, "CUDA only: nothing to hand over", floor.median_us, floor.min_us, floor.median_us});

    // Vulkan: an empty submission signals the frame; CUDA waits for it in-stream and
    // releases the slot for Vulkan's next write the same way.
    {
        FrameRing ring(gpu.link, desc, 2), deep(gpu.link, desc, 4);
        const auto ring_frames = [&](FrameRing& r, bool host_waits) {
            return time_frames(
                [&](uint64_t f) {
                    r.begin_write(f);
                    const uint64_t ready = context.queue().submit([](VkCommandBuffer) {});
                    if (host_waits) context.queue().wait(ready);
                    r.end_write(f, ready);
                    one_sample(r.begin_read(f, stream), f);
                    r.end_read(f, stream);
                    if (host_waits) sync_cuda();
                },
                [&] { sync_cuda(); context.queue().wait_all(); }, kFrames);
        };
        Timing t = ring_frames(ring, false);
        rows.push_back({job, "Vulkan, timeline semaphores in-stream", t.median_us, t.min_us, floor.median_us});
        // A deeper ring: Vulkan's submission waits for CUDA's release of an older frame.
        t = ring_frames(deep, false);
        rows.push_back({job, "Vulkan, timeline semaphores in-stream, 4-slot ring", t.median_us, t.min_us,
                        floor.median_us});
        t = ring_frames(ring, true);
        rows.push_back({job, "Vulkan, host waits (vkWaitSemaphores + cudaStreamSynchronize)", t.median_us, t.min_us,
                        floor.median_us});
        // Where the time goes: the submission alone, and the Vulkan -> CUDA direction alone
        // (no release back to Vulkan).
        t = time_frames([&](uint64_t) { context.queue().submit([](VkCommandBuffer) {}); },
                               [&] { context.queue().wait_all(); }, kFrames);
        rows.push_back({job, "Vulkan part: an empty vkQueueSubmit alone", t.median_us, t.min_us, floor.median_us});
        const cudaTextureObject_t object = ring.begin_read(0, stream);
        t = time_frames(
            [&](uint64_t f) {
                gpu.link.cuda_wait(stream, context.queue().submit([](VkCommandBuffer) {}));
                one_sample(object, f);
            },
            [&] { sync_cuda(); context.queue().wait_all(); }, kFrames);
        rows.push_back({job, "Vulkan, one way: submit + CUDA in-stream wait", t.median_us, t.min_us, floor.median_us});
    }
    std::fprintf(stderr, "handover [1/2] Vulkan measured\n");

    // OpenGL: map and unmap per frame (stream-ordered), or mapped once with host waits.
    try {
        EglContext gl(EglContextDesc{.cuda_device = gpu.link.cuda_device()});
        GlTexture texture = GlTexture::create(gl, desc);
        texture.generate_mips();
        CudaGlTexture cuda(texture);
        Timing t = time_frames(
            [&](uint64_t f) {
                const CudaMipmaps mapped = cuda.map(stream);
                one_sample(cuda.texture_object(mapped), f);
                cuda.unmap(stream);
            },
            sync_cuda, kFrames);
        rows.push_back({job, "OpenGL, map + unmap per frame (in-stream)", t.median_us, t.min_us, floor.median_us});
        const cudaTextureObject_t kept = cuda.texture_object(cuda.map(stream));
        t = time_frames(
            [&](uint64_t f) {
                gl.gl().glFinish();  // GL's writes are done before CUDA reads
                one_sample(kept, f);
                sync_cuda();  // CUDA's reads are done before GL writes again
            },
            sync_cuda, kFrames);
        rows.push_back({job, "OpenGL, kept mapped (glFinish + cudaStreamSynchronize)", t.median_us, t.min_us,
                        floor.median_us});
        cuda.unmap(stream);
        sync_cuda();
        std::fprintf(stderr, "handover [2/2] OpenGL measured\n");
    } catch (const std::exception& e) {
        std::printf("handover: OpenGL rows left out: %s\n", e.what());
    }
    tag_rows(rows, "handover");
    return rows;
}

}  // namespace tvlm
