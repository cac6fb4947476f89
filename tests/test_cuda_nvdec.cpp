// NVDEC through FFmpeg: an H.264 clip (made here with libx264) decoded on the GPU, its NV12
// frames converted to RGBA8 by CUDA and compared with the CPU decoder's frames, then fed to
// a CudaVideoTexture whose levels must equal a full regeneration after every frame. Where
// NVDEC cannot start, the suite says why (and checks that the reason names what is missing).
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cuda_array_texture.h"
#include "cuda_box_mips.h"
#include "cuda_check.h"
#include "cuda_video_texture.h"
#include "error.h"
#include "test_clip.h"
#include "video_decoder.h"
#include "video_encoder.h"
#include "video_frames.h"

namespace tvlm {
namespace {

std::vector<uint8_t> level_bytes(const CudaMipmaps& t, uint32_t level) {
    const Extent2D e = level_extent(t.desc.width, t.desc.height, level);
    std::vector<uint8_t> bytes(size_t{e.width} * e.height * 4);
    TVLM_CUDA_CHECK(cudaMemcpy2DFromArray(bytes.data(), size_t{e.width} * 4, t.level(level), 0, 0, size_t{e.width} * 4,
                                          e.height, cudaMemcpyDeviceToHost));
    return bytes;
}

TEST_CASE("NVDEC frames match the CPU decoder's and update a CUDA video texture exactly") {
    const TestClip clip{.width = 640, .height = 360, .frames = 30, .cut = 20};
    const auto path = std::filesystem::temp_directory_path() / "tvlm_test_nvdec.mp4";
    {
        VideoEncoder encoder(path.string(), clip.width, clip.height, {.codec = "libx264"});
        for (uint32_t f = 0; f < clip.frames; ++f) encoder.write(test_clip_frame(clip, f));
        encoder.finish();
    }
    std::optional<VideoDecoder> nvdec;
    try {
        nvdec.emplace(path.string(), VideoDecoderOptions{.decode = VideoDecode::nvdec});
    } catch (const Error& e) {
        MESSAGE("NVDEC is not available here: " << std::string(e.what()));
        CHECK(std::string(e.what()).find("NVDEC") != std::string::npos);
        return;
    }
    CHECK(nvdec->info().decoder == "NVDEC (CUDA device 0)");
    VideoDecoder cpu(path.string());
    CudaVideoTexture video(clip.width, clip.height);
    CudaArrayTexture full = CudaArrayTexture::create(TextureDesc::sampled_2d(clip.width, clip.height, Format::rgba8_unorm));
    const CudaBoxMips full_mips(full.mipmaps());
    std::vector<uint8_t> from_cpu(size_t{clip.width} * clip.height * 4), from_gpu(from_cpu.size());
    uint32_t frames = 0, whole = 0;
    double worst_mean = 0, copied = 0;
    int worst = 0;
    DeviceFrame frame;
    while (nvdec->next(frame)) {
        CAPTURE(frames);
        REQUIRE(cpu.next(from_cpu));
        CHECK(frame.matrix == YuvMatrix::bt601);  // what the encoder wrote for 360 lines
        // The legacy default stream: ordered after FFmpeg's copies out of the decoder.
        nv12_to_rgba8({frame.luma, frame.chroma, frame.luma_pitch, frame.chroma_pitch, frame.width, frame.height,
                       frame.matrix, frame.full_range},
                      video.frame(), video.frame_pitch(), nullptr);
        TVLM_CUDA_CHECK(cudaMemcpy(from_gpu.data(), video.frame(), from_gpu.size(), cudaMemcpyDeviceToHost));
        double sum = 0;
        for (size_t i = 0; i < from_gpu.size(); ++i) {
            const int d = std::abs(int{from_gpu[i]} - int{from_cpu[i]});
            sum += d;
            worst = std::max(worst, d);
        }
        worst_mean = std::max(worst_mean, sum / double(from_gpu.size()));
        full_mips.generate_from(video.frame(), video.frame_pitch(), nullptr);  // before update() reads the frame
        const FrameChanges changes = video.update(nullptr);
        whole += changes.whole_frame;
        copied += changes.copied_fraction;
        TVLM_CUDA_CHECK(cudaDeviceSynchronize());
        for (uint32_t level = 0; level < full.desc().mip_levels(); ++level) {
            CAPTURE(level);
            CHECK(level_bytes(video.mipmaps(), level) == level_bytes(full.mipmaps(), level));
        }
        ++frames;
    }
    CHECK(frames == clip.frames);
    MESSAGE("NVDEC vs CPU decoding: largest mean difference per frame " << worst_mean << ", largest " << worst
            << "; " << whole << " of " << frames << " frames replaced whole, " << 100.0 * copied / frames
            << "% of texels copied per frame");
    CHECK(worst_mean < 1.0);  // the chroma upsampling differs (swscale's), the matrix does not
    CHECK(whole >= 2);
    CHECK_THROWS_WITH_AS(nvdec->next(from_cpu), doctest::Contains("next(DeviceFrame&)"), Error);
}

}  // namespace
}  // namespace tvlm
