// tvlm bench handover: what handing a frame to CUDA costs per frame on each path, wall
// time, the producer's work empty and the CUDA work one sample, so only the hand-over
// shows. The floor is the same CUDA kernel launched per frame with nothing to hand over.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apps/bench/bench_gpu.h"
#include "apps/bench/bench_timing.h"
#include "cuda_pipelines/cuda_array_texture.h"
#include "cuda/cuda_check.h"
#include "interop/gl/cuda_gl_texture.h"
#include "cuda/device_buffer.h"
#include "interop/gl/egl_context.h"
#include "interop/textures/frame_ring.h"
#include "interop/gl/gl_texture.h"
#include "interop/textures/imported_texture.h"
#include "cuda/sampling/texture_reads.h"
#include "engine/core/timeline.h"
#include "engine/core/vk_check.h"

namespace tvlm {

namespace {

// A command pool of the bench's own, for submissions that bypass CommandQueue (what the
// driver charges for a submission by itself). Waits for the queue before it goes.
class OwnCommandPool {
public:
    explicit OwnCommandPool(Context& context) : device_(context.device()), queue_(context.queue().handle()) {
        VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        info.queueFamilyIndex = context.queue().family();
        check_vk(vkCreateCommandPool(device_, &info, nullptr, pool_.create(device_)), "vkCreateCommandPool");
    }
    ~OwnCommandPool() { vkQueueWaitIdle(queue_); }  // then the pool goes, and its command buffers

    // An empty command buffer, recorded once, that may be submitted again while in flight.
    VkCommandBuffer recorded_empty() const {
        VkCommandBuffer commands = VK_NULL_HANDLE;
        VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        alloc.commandPool = pool_.get();
        alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        alloc.commandBufferCount = 1;
        check_vk(vkAllocateCommandBuffers(device_, &alloc, &commands), "vkAllocateCommandBuffers");
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
        check_vk(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
        check_vk(vkEndCommandBuffer(commands), "vkEndCommandBuffer");
        return commands;
    }

private:
    VkDevice device_;
    VkQueue queue_;
    VkCommandPoolHandle pool_;
};

}  // namespace

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
    const Timing floor = time_frames([&](uint64_t f) { one_sample(own_object.get(), f); }, sync_cuda, kFrames);
    rows.push_back({job, "CUDA only: nothing to hand over", floor.median_us, floor.min_us, floor.median_us});

    // Vulkan: an empty submission signals the frame; CUDA reads it and releases the slot
    // for Vulkan's next write, every wait on the GPU. Rings of several depths: the GPU
    // switches between the Vulkan and CUDA contexts at a cost the latency rows below
    // measure, and a deeper ring lets it run more frames per switch.
    {
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
                [&] {
                    sync_cuda();
                    context.queue().wait_all();
                },
                kFrames);
        };
        const auto row = [&](const std::string& method, const Timing& t) {
            rows.push_back({job, method, t.median_us, t.min_us, floor.median_us});
        };
        for (uint32_t slots : {2u, 4u, 8u, 16u, 32u, 64u, 128u}) {
            FrameRing ring(gpu.link, desc, slots);
            row("Vulkan, timeline semaphores in-stream, " + std::to_string(slots) + "-slot ring",
                ring_frames(ring, false));
        }
        {
            FrameRing elastic(gpu.link, desc, 2, {}, 128);
            const Timing t = ring_frames(elastic, false);
            row("Vulkan, elastic ring: 2 slots, grew to " + std::to_string(elastic.slots()) + " of 128", t);
        }
        // Frames in batches of k: the producer ends k frames with one submission's value (a
        // renderer drawing k frames or views in one submission), the consumer waits once and
        // releases once per batch, and runs the kernel per frame as before. `handed_over`
        // false: the same submissions and kernels with no ring (what the hand-over adds to).
        const auto batched_frames = [&](FrameRing* r, uint32_t k) {
            uint64_t first = 0;
            uint32_t pending = 0;
            const auto flush = [&] {
                if (pending == 0) return;
                const uint64_t ready = context.queue().submit([](VkCommandBuffer) {});
                if (r) {
                    for (uint64_t f = first; f < first + pending; ++f) r->end_write(f, ready);
                    const std::vector<cudaTextureObject_t> objects = r->begin_read(first, pending, stream);
                    for (uint32_t i = 0; i < pending; ++i) one_sample(objects[i], first + i);
                    r->end_read(first, pending, stream);
                } else {
                    for (uint32_t i = 0; i < pending; ++i) one_sample(own_object.get(), first + i);
                }
                pending = 0;
            };
            return time_frames(
                [&](uint64_t f) {
                    if (r) r->begin_write(f);
                    if (pending++ == 0) first = f;
                    if (pending == k) flush();
                },
                [&] {
                    flush();
                    sync_cuda();
                    context.queue().wait_all();
                },
                kFrames);
        };
        for (uint32_t k : {4u, 8u, 16u}) {
            FrameRing ring(gpu.link, desc, 128);
            row("Vulkan, batches of " + std::to_string(k) +
                    " frames (one submission, CUDA wait and release each), 128-slot ring",
                batched_frames(&ring, k));
        }
        {
            FrameRing elastic(gpu.link, desc, 2, {}, 128);
            const Timing t = batched_frames(&elastic, 8);
            row("Vulkan, batches of 8 frames, elastic ring: 2 slots, grew to " + std::to_string(elastic.slots()) +
                    " of 128",
                t);
        }
        row("Vulkan submission per 8 frames and CUDA kernel per frame, nothing handed over",
            batched_frames(nullptr, 8));
        // Wall time per frame with `produce` on this thread and `consume` on another, as a
        // renderer and a model run: each thread pays only its own side's API calls. Runs of
        // kFrames frames (the consumer thread started and joined within each run).
        uint64_t next_frame = 0;
        const auto on_two_threads = [&](const std::function<void(uint64_t)>& produce,
                                        const std::function<void(uint64_t)>& consume) -> Timing {
            std::vector<double> per_frame;
            for (int run = 0; run < kRuns + 2; ++run) {  // the first two warm up
                const uint64_t first = next_frame;
                next_frame += kFrames;
                std::exception_ptr failure;
                const auto start = std::chrono::steady_clock::now();
                std::thread consumer([&] {
                    try {
                        TVLM_CUDA_CHECK(cudaSetDevice(gpu.link.cuda_device()));
                        for (uint64_t f = first; f < first + kFrames; ++f) consume(f);
                        sync_cuda();
                    } catch (...) { failure = std::current_exception(); }
                });
                for (uint64_t f = first; f < first + kFrames; ++f) produce(f);
                consumer.join();
                context.queue().wait_all();
                if (failure) std::rethrow_exception(failure);
                const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
                if (run >= 2) per_frame.push_back(took.count() / kFrames);
            }
            std::sort(per_frame.begin(), per_frame.end());
            return {per_frame[per_frame.size() / 2], per_frame.front()};
        };
        {
            FrameRing elastic(gpu.link, desc, 2, {}, 128);
            const Timing t = on_two_threads(
                [&](uint64_t f) {
                    elastic.begin_write(f);
                    elastic.end_write(f, context.queue().submit([](VkCommandBuffer) {}));
                },
                [&](uint64_t f) {
                    one_sample(elastic.begin_read(f, stream), f);
                    elastic.end_read(f, stream);
                });
            row("Vulkan, elastic ring, producer and consumer on two threads: grew to " +
                    std::to_string(elastic.slots()) + " of 128",
                t);
        }
        row("Vulkan submission and CUDA kernel per frame on two threads, nothing handed over",
            on_two_threads([&](uint64_t) { context.queue().submit([](VkCommandBuffer) {}); },
                           [&](uint64_t f) { one_sample(own_object.get(), f); }));
        FrameRing ring(gpu.link, desc, 2);
        row("Vulkan, host waits (vkWaitSemaphores + cudaStreamSynchronize)", ring_frames(ring, true));
        // Where the time goes: the submission alone, and the Vulkan -> CUDA direction alone
        // (no release back to Vulkan).
        row("Vulkan part: an empty vkQueueSubmit alone",
            time_frames([&](uint64_t) { context.queue().submit([](VkCommandBuffer) {}); },
                        [&] { context.queue().wait_all(); }, kFrames));
        // The floor of a stream with nothing handed over: a Vulkan submission (what makes a
        // frame) and the CUDA kernel, per frame, unsynchronised. The hand-over is what a
        // ring adds to it.
        row("Vulkan submission and CUDA kernel per frame, nothing handed over",
            time_frames(
                [&](uint64_t f) {
                    context.queue().submit([](VkCommandBuffer) {});
                    one_sample(own_object.get(), f);
                },
                [&] {
                    sync_cuda();
                    context.queue().wait_all();
                },
                kFrames));
        {  // What a submission costs the host in the driver itself (vkQueueSubmit2, no fence).
            const TimelineSemaphore timeline(context.device(), 0, false);
            uint64_t value = 0;
            const OwnCommandPool pool(context);
            const VkCommandBuffer commands = pool.recorded_empty();
            const auto submit = [&](bool signal, bool with_commands) {
                VkSemaphoreSubmitInfo signal_info{VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
                signal_info.semaphore = timeline.handle();
                signal_info.value = signal ? ++value : 0;
                signal_info.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
                VkCommandBufferSubmitInfo command_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
                command_info.commandBuffer = commands;
                VkSubmitInfo2 info{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
                info.commandBufferInfoCount = with_commands ? 1 : 0;
                info.pCommandBufferInfos = &command_info;
                info.signalSemaphoreInfoCount = signal ? 1 : 0;
                info.pSignalSemaphoreInfos = &signal_info;
                check_vk(vkQueueSubmit2(context.queue().handle(), 1, &info, VK_NULL_HANDLE), "vkQueueSubmit2");
            };
            const auto idle = [&] { check_vk(vkQueueWaitIdle(context.queue().handle()), "vkQueueWaitIdle"); };
            row("vkQueueSubmit2 alone: an empty batch",
                time_frames([&](uint64_t) { submit(false, false); }, idle, kFrames));
            row("vkQueueSubmit2 alone: a timeline signal",
                time_frames([&](uint64_t) { submit(true, false); }, idle, kFrames));
            row("vkQueueSubmit2 alone: an empty command buffer recorded once",
                time_frames([&](uint64_t) { submit(false, true); }, idle, kFrames));
        }
        const ImportedTexture imported = ImportedTexture::create(context, desc);
        const cudaTextureObject_t object = imported.object.get();
        row("Vulkan, one way: submit + CUDA in-stream wait",
            time_frames(
                [&](uint64_t f) {
                    gpu.link.cuda_wait(stream, context.queue().submit([](VkCommandBuffer) {}));
                    one_sample(object, f);
                },
                [&] {
                    sync_cuda();
                    context.queue().wait_all();
                },
                kFrames));
    }
    // Where the time goes: the latency of one step, from idle, seen by the host spinning on
    // non-blocking reads (docs/benchmarks.md, "Hand-over"). Signals and waits are quick;
    // GPU work of one context right after GPU work of the other is not: the GPU switches
    // contexts. Floor: a CUDA event alone.
    {
        const std::string latency = "latency of one step from idle, seen by the host";
        const CudaEvent event = make_event();
        const auto record_and_spin = [&] {
            TVLM_CUDA_CHECK(cudaEventRecord(event.get(), stream));
            while (cudaEventQuery(event.get()) == cudaErrorNotReady) {}
        };
        const TimelineSemaphore& vulkan = context.queue().timeline();
        const auto vulkan_submit_and_spin = [&] {
            const uint64_t v = context.queue().submit([](VkCommandBuffer) {});
            while (vulkan.value() < v) {}
        };
        const auto cuda_kernel_and_spin = [&] {
            one_sample(own_object.get(), 0);
            record_and_spin();
        };
        const auto idle = [&] {
            sync_cuda();
            context.queue().wait_all();
        };
        const auto then = [](std::function<void()> a, std::function<void()> b) {
            return [a = std::move(a), b = std::move(b)] {
                a();
                b();
            };
        };
        const auto after_a_millisecond = [] {
            const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
            while (std::chrono::steady_clock::now() < until) {}
        };
        const Timing event_alone = time_latency(record_and_spin, idle);
        const auto row = [&](const std::string& method, const Timing& t) {
            rows.push_back({latency, method, t.median_us, t.min_us, event_alone.median_us});
        };
        row("CUDA event", event_alone);
        row("CUDA kernel, after CUDA work", time_latency(cuda_kernel_and_spin, then(cuda_kernel_and_spin, [] {})));
        row("Vulkan empty submission, after Vulkan work", time_latency(vulkan_submit_and_spin, idle));
        row("CUDA signals Vulkan's semaphore", time_latency(
                                                   [&] {
                                                       const uint64_t r = gpu.link.cuda_signal(stream);
                                                       while (!gpu.link.released_reached(r)) {}
                                                   },
                                                   idle));
        row("Vulkan empty submission, after a CUDA event",
            time_latency(vulkan_submit_and_spin, then(idle, record_and_spin)));
        row("Vulkan empty submission, after a CUDA kernel",
            time_latency(vulkan_submit_and_spin, then(idle, cuda_kernel_and_spin)));
        row("Vulkan empty submission, 1 ms after a CUDA kernel",
            time_latency(vulkan_submit_and_spin, then(then(idle, cuda_kernel_and_spin), after_a_millisecond)));
        row("CUDA kernel, after a Vulkan submission",
            time_latency(cuda_kernel_and_spin, then(idle, vulkan_submit_and_spin)));
        row("Vulkan submission -> CUDA in-stream wait -> CUDA event",
            time_latency(
                [&] {
                    gpu.link.cuda_wait(stream, context.queue().submit([](VkCommandBuffer) {}));
                    record_and_spin();
                },
                idle));
        row("CUDA signal -> Vulkan submission waiting on it",
            time_latency(
                [&] {
                    gpu.link.vulkan_wait(gpu.link.cuda_signal(stream));
                    vulkan_submit_and_spin();
                },
                idle));
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
        rows.push_back(
            {job, "OpenGL, kept mapped (glFinish + cudaStreamSynchronize)", t.median_us, t.min_us, floor.median_us});
        cuda.unmap(stream);
        sync_cuda();
        std::fprintf(stderr, "handover [2/2] OpenGL measured\n");
    } catch (const std::exception& e) { std::printf("handover: OpenGL rows left out: %s\n", e.what()); }
    tag_rows(rows, "handover");
    return rows;
}

}  // namespace tvlm
