// tvlm bench video: a frame to patches, end to end, on every path, wall time per frame
// with frames pipelined (runs of several frames, the host waiting only at the end of a
// run). Two starts: a frame in host memory (pageable, as a decoder or NumPy hands it over;
// and pinned for CUDA) -> upload -> mips -> 273 foveated patches per image; and a frame
// already in CUDA memory -> into the texture -> mips -> patches. 1024^2 to 4096^2, RGBA8
// and RGBA16F, batches of 1 and 32. Floors: the upload at the pinned bandwidth plus the
// GPU's bytes (frame read, level 0 and mips written, patches written) at the device copy
// bandwidth, both measured in this run.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "apps/bench/bench_gpu.h"
#include "apps/bench/bench_timing.h"
#include "cuda_pipelines/cuda_array_texture.h"
#include "cuda_pipelines/cuda_box_mips.h"
#include "cuda/cuda_check.h"
#include "cuda_pipelines/cuda_frame_graph.h"
#include "interop/gl/cuda_gl_texture.h"
#include "cuda_pipelines/cuda_patch_sampler.h"
#include "cuda/device_buffer.h"
#include "interop/gl/egl_context.h"
#include "interop/textures/frame_ring.h"
#include "engine/mips/generate_mips.h"
#include "interop/gl/gl_texture.h"
#include "interop/textures/imported_texture.h"
#include "cuda/tensors/level_copy.h"
#include "engine/sampling/patch_layouts.h"
#include "cuda_pipelines/pinned_staging.h"
#include "cuda/tensors/tensor_texels.h"
#include "engine/textures/test_chart.h"
#include "engine/textures/transfer.h"

namespace tvlm {

namespace {

struct Job {
    uint32_t size, layers;
    Format format;
};

// One foveated layout per image, fixations spread over a grid for batches.
PatchLayout video_layout(const Job& j) {
    std::vector<PatchLayout> per_image;
    for (uint32_t b = 0; b < j.layers; ++b) {
        FoveatedParams p;
        if (j.layers > 1) p.fixations = {{(b % 8 + 0.5) / 8.0, (b / 8 % 4 + 0.5) / 4.0}};
        per_image.push_back(foveated_layout(j.size, j.size, p).layout);
    }
    return j.layers > 1 ? batch_layouts(per_image) : per_image[0];
}

// The test chart in the job's format, repeated for every layer: the frame's texels.
std::vector<uint8_t> chart_frame(const Job& j) {
    const Rgba8Image chart = make_test_chart(j.size, j.size);
    const std::vector<uint8_t> layer = j.format == Format::rgba8_unorm
                                           ? chart.texels
                                           : encode_texels(to_image(host_pixels(chart.texels, j.size, j.size), 4),
                                                           j.format);
    std::vector<uint8_t> frame;
    frame.reserve(layer.size() * j.layers);
    for (uint32_t b = 0; b < j.layers; ++b) frame.insert(frame.end(), layer.begin(), layer.end());
    return frame;
}

}  // namespace

std::vector<Row> bench_video(BenchGpu& gpu) {
    Context& context = gpu.context;
    const cudaStream_t stream = gpu.stream;
    const BenchMachine& m = gpu.machine;
    std::optional<EglContext> gl;
    try {
        gl.emplace(EglContextDesc{.cuda_device = gpu.link.cuda_device()});
    } catch (const std::exception& e) { std::printf("video: OpenGL rows left out: %s\n", e.what()); }
    std::vector<Job> jobs;
    for (uint32_t layers : {1u, 32u})
        for (Format format : {Format::rgba8_unorm, Format::rgba16f})
            for (uint32_t size : {1024u, 2048u, 4096u}) jobs.push_back({size, layers, format});

    std::vector<Row> rows;
    const auto sync_cuda = [&] { TVLM_CUDA_CHECK(cudaStreamSynchronize(stream)); };
    for (size_t i = 0; i < jobs.size(); ++i) {
        const Job& j = jobs[i];
        const TextureDesc desc{j.size, j.size, j.layers, 0, j.format, false};
        TextureDesc exportable = desc;
        exportable.exportable = true;
        const PatchLayout layout = video_layout(j);
        const PatchOutput output{.channels = 3};
        const CudaPatchSampler sampler(layout, output);
        DeviceBuffer<unsigned char> out(output.bytes(layout));
        const std::vector<uint8_t> host_frame = chart_frame(j);
        const double frame_bytes = double(host_frame.size());
        const size_t row_bytes = size_t{j.size} * format_info(j.format).texel_bytes();
        // Frames per timed run: about 512 MB of frames, at least one.
        const int frames = int(std::clamp(512e6 / frame_bytes, 1.0, 32.0));
        const int runs = frames > 1 ? 7 : 5;
        const auto time = [&](const std::function<void(uint64_t)>& frame, const std::function<void()>& finish) {
            return time_frames(frame, finish, frames, runs, 2);
        };
        const std::string what = std::to_string(j.size) + "^2 " + std::string(format_info(j.format).name) +
                                 (j.layers > 1 ? " x " + std::to_string(j.layers) : "") + " -> " +
                                 std::to_string(layout.patches_per_image) + " patches" +
                                 (j.layers > 1 ? " per image" : "");
        if (what.find(gpu.only) == std::string::npos) continue;
        const std::string host_job = "host frame " + what, device_job = "CUDA frame " + what;
        const double gpu_bytes = frame_bytes * 4.0 / 3.0 + double(out.bytes());  // level 0 read, mips + patches written
        const double host_floor = (frame_bytes / m.upload_bandwidth + gpu_bytes / m.copy_bandwidth) * 1e6;
        // A frame in CUDA memory: read once, written into level 0, the mips and patches written.
        // Level 0 need not be read back: generate_from's first pass reads the frame itself.
        const double device_floor = (frame_bytes * (2.0 + 1.0 / 3.0) + double(out.bytes())) / m.copy_bandwidth * 1e6;
        const auto add = [&](const std::string& job, const std::string& method, Timing t, double floor_us) {
            rows.push_back({job, method, t.median_us, t.min_us, floor_us});
        };

        // Vulkan: staging upload + box mips (compute), CUDA samples after an in-stream wait.
        {
            FrameRing ring(gpu.link, exportable, 2, sampler.sampler_desc());
            FrameUploader uploader(context, desc);
            // From the pageable frame (a memcpy into staging), or written by the producer
            // straight into the staging buffer (the frame is never elsewhere: no copy).
            for (bool staged : {false, true})
                add(host_job,
                    staged ? "Vulkan, frame in staging: upload + box mips -> CUDA patches"
                           : "Vulkan, pageable frame: upload + box mips -> CUDA patches",
                    time(
                        [&](uint64_t f) {
                            Texture& t = ring.begin_write(f);
                            if (staged) {
                                uploader.next_staging();  // the producer would write the frame here
                                uploader.upload_staged(t);
                            } else {
                                uploader.upload(t, host_frame.data());
                            }
                            ring.end_write(f, generate_mips(context, t, MipFilter::box));
                            const cudaTextureObject_t object = ring.begin_read(f, stream);
                            sampler.sample(ring.texture(f).cuda, object, out.data(), out.bytes(), stream);
                            ring.end_read(f, stream);
                        },
                        [&] {
                            sync_cuda();
                            context.queue().wait_all();
                        }),
                    host_floor);
        }
        // CUDA only: the frame copied into a CUDA array, CUDA box mips, the same sampler.
        {
            const CudaArrayTexture texture = CudaArrayTexture::create(desc);
            const CudaBoxMips mips(texture);
            const TextureObject object = texture.mipmaps().make_texture_object(sampler.sampler_desc());
            const auto frame_from = [&](const void* texels) {
                return [&, texels](uint64_t) {
                    copy_to_level0(texture, texels, row_bytes, 0, j.layers, stream);
                    mips.generate(stream);
                    sampler.sample(texture, object.get(), out.data(), out.bytes(), stream);
                };
            };
            add(host_job, "CUDA only, pageable frame: memcpy + box mips + patches",
                time(frame_from(host_frame.data()), sync_cuda), host_floor);
            {
                const PinnedMemory pinned = allocate_pinned(host_frame.size());
                std::copy(host_frame.begin(), host_frame.end(), static_cast<uint8_t*>(pinned.get()));
                add(host_job, "CUDA only, pinned frame: memcpy + box mips + patches",
                    time(frame_from(pinned.get()), sync_cuda), host_floor);
            }
            DeviceBuffer<uint8_t> device_frame(host_frame.size());
            TVLM_CUDA_CHECK(
                cudaMemcpy(device_frame.data(), host_frame.data(), host_frame.size(), cudaMemcpyHostToDevice));
            // The pageable frame staged through pinned buffers by several host threads
            // (PinnedStaging), then the kernel copy into level 0.
            {
                DeviceBuffer<uint8_t> staged(host_frame.size());
                PinnedStaging staging;
                add(host_job,
                    "CUDA only, pageable frame staged by " + std::to_string(staging.threads()) +
                        " threads: copy + box mips + patches",
                    time(
                        [&](uint64_t) {
                            staging.copy(staged.data(), host_frame.data(), host_frame.size(), stream);
                            mips.generate_from(staged.data(), row_bytes, stream);
                            sampler.sample(texture, object.get(), out.data(), out.bytes(), stream);
                        },
                        sync_cuda),
                    host_floor);
            }
            add(device_job, "CUDA only: copy + box mips + patches", time(frame_from(device_frame.data()), sync_cuda),
                device_floor);
            // The previous generate_from's copy: tensor_texels' kernel through the level-0 surface.
            const SurfaceObject level0 = texture.mipmaps().make_surface(0);
            const bool half = j.format == Format::rgba16f;
            const int64_t row_elements = int64_t(row_bytes / (half ? 2 : 1));
            const TensorView frame_view{device_frame.data(),
                                        half ? TensorDtype::f16 : TensorDtype::u8,
                                        row_elements * j.size,
                                        1,
                                        row_elements,
                                        4,
                                        4};
            const auto kernel_copy = [&] {
                write_texels(frame_view, level0.get(), j.layers > 1, surface_texel(j.format),
                             {0, 0, j.size, j.size, 0, j.layers}, stream);
            };
            // Where a small frame's (or batch's) time goes: each step's GPU time alone, back to back.
            if (j.size == 1024) {
                const std::string step_job = "CUDA frame " + what + ", one step (GPU time)";
                add(step_job, "copy into level 0",
                    time_cuda(stream,
                              [&] { copy_to_level0(texture, device_frame.data(), row_bytes, 0, j.layers, stream); }),
                    2.0 * frame_bytes / m.copy_bandwidth * 1e6);
                add(step_job, "copy into level 0 by a kernel (the previous generate_from's)",
                    time_cuda(stream, kernel_copy), 2.0 * frame_bytes / m.copy_bandwidth * 1e6);
                const LevelCopy chunks{device_frame.data(),
                                       row_bytes,
                                       uint32_t(row_bytes),
                                       j.size,
                                       level0.get(),
                                       j.layers > 1,
                                       0,
                                       j.layers};
                add(step_job, "copy into level 0 in 16-byte chunks, 8 x 4 per warp (generate_from's, unfused)",
                    time_cuda(stream, [&] { copy_level_rows(chunks, stream); }),
                    2.0 * frame_bytes / m.copy_bandwidth * 1e6);
                add(step_job, "box mips", time_cuda(stream, [&] { mips.generate(stream); }),
                    frame_bytes * (1.0 + 1.0 / 3.0) / m.copy_bandwidth * 1e6);
                add(step_job, "copy and box mips in one pass (generate_from)",
                    time_cuda(stream, [&] { mips.generate_from(device_frame.data(), row_bytes, stream); }),
                    frame_bytes * (2.0 + 1.0 / 3.0) / m.copy_bandwidth * 1e6);
                add(step_job, "patches",
                    time_cuda(stream, [&] { sampler.sample(texture, object.get(), out.data(), out.bytes(), stream); }),
                    double(out.bytes()) / m.copy_bandwidth * 1e6);
            }
            // The previous generate_from: a kernel copies the frame into level 0, then the chain
            // reads it back.
            if (j.layers == 1 || j.format != Format::rgba8_unorm) {
                add(device_job, "CUDA only: kernel copy, then box mips + patches",
                    time(
                        [&](uint64_t) {
                            kernel_copy();
                            mips.generate(stream);
                            sampler.sample(texture, object.get(), out.data(), out.bytes(), stream);
                        },
                        sync_cuda),
                    device_floor);
            }
            // generate_from: the chain's first pass reads the frame and writes level 0 on the
            // way; then the same steps captured once as a CUDA graph and relaunched per frame.
            add(device_job, "CUDA only: copy fused into the box mips (generate_from) + patches",
                time(
                    [&](uint64_t) {
                        mips.generate_from(device_frame.data(), row_bytes, stream);
                        sampler.sample(texture, object.get(), out.data(), out.bytes(), stream);
                    },
                    sync_cuda),
                device_floor);
            {
                CudaFrameGraph graph({texture.mipmaps(), &mips, &sampler, object.get(), device_frame.data(), row_bytes,
                                      out.data(), out.bytes()});
                add(device_job, "CUDA only, one CUDA graph: generate_from + patches",
                    time([&](uint64_t) { graph.launch(stream); }, sync_cuda), device_floor);
            }
            if (mips.deferred_tail_level() < texture.desc().mip_levels()) {  // the previous order, where it differs
                CudaFrameGraph graph({texture.mipmaps(), &mips, &sampler, object.get(), device_frame.data(), row_bytes,
                                      out.data(), out.bytes(), false});
                add(device_job, "CUDA only, one CUDA graph, the chain's tail before the patches",
                    time([&](uint64_t) { graph.launch(stream); }, sync_cuda), device_floor);
            }
            // The same on a Vulkan texture imported in CUDA: nothing on the Vulkan side per frame,
            // the frame fused into the chain's first pass as on the CUDA-only array; then the
            // previous way (a copy into level 0, then the chain) for comparison.
            ImportedTexture imported = ImportedTexture::create(context, exportable, sampler.sampler_desc());
            const CudaBoxMips imported_mips(imported.cuda);
            add(device_job, "Vulkan texture in CUDA: copy fused into the box mips (generate_from) + patches",
                time(
                    [&](uint64_t) {
                        imported_mips.generate_from(device_frame.data(), row_bytes, stream);
                        sampler.sample(imported.cuda, imported.object.get(), out.data(), out.bytes(), stream);
                    },
                    sync_cuda),
                device_floor);
            {
                CudaFrameGraph graph({imported.cuda, &imported_mips, &sampler, imported.object.get(),
                                      device_frame.data(), row_bytes, out.data(), out.bytes()});
                add(device_job, "Vulkan texture in CUDA, one CUDA graph: generate_from + patches",
                    time([&](uint64_t) { graph.launch(stream); }, sync_cuda), device_floor);
            }
            add(device_job, "Vulkan texture in CUDA: copy + box mips + patches (the previous way)",
                time(
                    [&](uint64_t) {
                        copy_to_level0(imported.cuda, device_frame.data(), row_bytes, 0, j.layers, stream);
                        imported_mips.generate(stream);
                        sampler.sample(imported.cuda, imported.object.get(), out.data(), out.bytes(), stream);
                    },
                    sync_cuda),
                device_floor);
            // OpenGL: glTexSubImage + glGenerateMipmap, mapped per frame for the sampler;
            // from CUDA memory the frame goes in through a mapping first.
            if (gl) {
                GlTexture texture_gl = GlTexture::create(*gl, desc);
                CudaGlTexture cuda(texture_gl, CudaGlAccess::read_write);
                const auto sample_mapped = [&] {
                    const CudaMipmaps mapped = cuda.map(stream);  // after GL's mips
                    sampler.sample(mapped, cuda.texture_object(mapped, sampler.sampler_desc()), out.data(), out.bytes(),
                                   stream);
                    cuda.unmap(stream);
                };
                add(host_job, "OpenGL glTexSubImage + glGenerateMipmap -> map -> CUDA patches",
                    time(
                        [&](uint64_t) {
                            texture_gl.upload_texels(host_frame.data(), 0, j.layers);
                            texture_gl.generate_mips();
                            sample_mapped();
                        },
                        sync_cuda),
                    host_floor);
                add(device_job, "OpenGL: map, copy, unmap, glGenerateMipmap, map, patches",
                    time(
                        [&](uint64_t) {
                            copy_to_level0(cuda.map(stream), device_frame.data(), row_bytes, 0, j.layers, stream);
                            cuda.unmap(stream);
                            texture_gl.generate_mips();
                            sample_mapped();
                        },
                        sync_cuda),
                    device_floor);
            }
        }
        std::fprintf(stderr, "video [%zu/%zu] %s\n", i + 1, jobs.size(), what.c_str());
    }
    const std::vector<Row> sharded = bench_sharded(gpu);
    rows.insert(rows.end(), sharded.begin(), sharded.end());
    tag_rows(rows, "video");
    return rows;
}

}  // namespace tvlm
