// Video files decoded on the CPU (engine/video_files): test videos made here with FFmpeg's
// encoders (a moving square on a static background, then a cut); every FFV1 frame decoded
// equals the frame written, bit for bit; MPEG-4 decodes every frame close to it; and
// missing, corrupt, truncated and audio-only files, and wrong buffers, are refused with
// what was wrong.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/mips/generate_mips.h"
#include "engine/video_files/test_clip.h"
#include "engine/textures/transfer.h"
#include "engine/video/video_texture.h"
#include "tests/vulkan_fixture.h"
#include "engine/video_files/video_decoder.h"
#include "engine/video_files/video_encoder.h"

using namespace tvlm;
using tvlm::test::VulkanFixture;

namespace {

std::filesystem::path scratch(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / "tvlm_test_video";
    std::filesystem::create_directories(dir);
    return dir / name;
}

// Frame f: a static gradient, a 12x12 square moving right; from frame 20 on, a cut to
// another scene (inverted, noise).
std::vector<uint8_t> scene_frame(uint32_t w, uint32_t h, uint32_t f) {
    std::vector<uint8_t> rgba(size_t{w} * h * 4);
    std::mt19937 noise(f);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            uint8_t* p = &rgba[(size_t{y} * w + x) * 4];
            p[0] = uint8_t(x * 255 / w);
            p[1] = uint8_t(y * 255 / h);
            p[2] = 90;
            p[3] = 255;
            if (f >= 20) {
                p[0] = uint8_t(255 - p[0]);
                p[2] = uint8_t(noise());
            }
            const uint32_t sx = 4 + 3 * f % (w - 16), sy = h / 3;
            if (x >= sx && x < sx + 12 && y >= sy && y < sy + 12) p[0] = p[1] = p[2] = 250;
        }
    return rgba;
}

std::filesystem::path make_video(const std::string& name, const char* codec, uint32_t w, uint32_t h, uint32_t frames) {
    const auto path = scratch(name);
    VideoEncoder writer(path.string(), w, h, {.codec = codec});
    for (uint32_t f = 0; f < frames; ++f) writer.write(scene_frame(w, h, f));
    writer.finish();
    return path;
}

}  // namespace

TEST_CASE("FFV1 frames decode to exactly the frames written, in order, then the end") {
    const auto path = make_video("lossless.mkv", "ffv1", 96, 64, 30);
    VideoDecoder decoder(path.string());
    CHECK(decoder.info().width == 96);
    CHECK(decoder.info().height == 64);
    CHECK(decoder.info().codec == "ffv1");
    CHECK(decoder.info().frames_per_second == doctest::Approx(25.0));
    std::vector<uint8_t> rgba(96 * 64 * 4);
    uint32_t f = 0;
    while (true) {
        std::fill(rgba.begin(), rgba.end(), uint8_t{7});  // poison
        if (!decoder.next(rgba)) break;
        CAPTURE(f);
        REQUIRE(f < 30);
        CHECK(rgba == scene_frame(96, 64, f));
        ++f;
    }
    CHECK(f == 30);
    CHECK(decoder.frames_decoded() == 30);
    CHECK_FALSE(decoder.next(rgba));  // stays at the end
}

TEST_CASE("MPEG-4 frames decode, every one close to the frame written") {
    const auto path = make_video("lossy.avi", "mpeg4", 128, 96, 25);
    VideoDecoder decoder(path.string(), 2);
    CHECK(decoder.info().codec == "mpeg4");
    CHECK(decoder.info().frames == 25);  // AVI states its frame count
    std::vector<uint8_t> rgba(128 * 96 * 4);
    uint32_t f = 0;
    while (decoder.next(rgba)) {
        CAPTURE(f);
        const std::vector<uint8_t> want = scene_frame(128, 96, f);
        double error = 0;
        for (size_t i = 0; i < rgba.size(); ++i) error += std::abs(int(rgba[i]) - int(want[i]));
        CHECK(error / double(rgba.size()) < (f >= 20 ? 40.0 : 8.0));  // the noise scene compresses worst
        ++f;
    }
    CHECK(f == 25);
}

TEST_CASE("Missing, corrupt, truncated and audio-only files and wrong buffers are refused with the reason") {
    CHECK_THROWS_WITH_AS(VideoDecoder(scratch("does_not_exist.mkv").string()), doctest::Contains("cannot be opened"),
                         Error);
    {
        const auto path = scratch("noise.mkv");
        std::ofstream out(path, std::ios::binary);
        std::mt19937 random(3);
        for (int i = 0; i < 20000; ++i) out.put(char(random()));
        out.close();
        CHECK_THROWS_AS(VideoDecoder(path.string()), Error);
    }
    {  // a WAV file: audio only
        const auto path = scratch("tone.wav");
        std::ofstream out(path, std::ios::binary);
        const auto u32 = [&](uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
        const auto u16 = [&](uint16_t v) { out.write(reinterpret_cast<const char*>(&v), 2); };
        out.write("RIFF", 4);
        u32(36 + 16000);
        out.write("WAVEfmt ", 8);
        u32(16);
        u16(1);
        u16(1);
        u32(8000);
        u32(16000);
        u16(2);
        u16(16);
        out.write("data", 4);
        u32(16000);
        for (int i = 0; i < 8000; ++i) u16(uint16_t((i * 40) & 0x7fff));
        out.close();
        CHECK_THROWS_WITH_AS(VideoDecoder(path.string()), doctest::Contains("no video stream"), Error);
    }
    {  // truncated: the AVI announces 25 frames, the file holds fewer
        const auto full = make_video("cut.avi", "mpeg4", 128, 96, 25);
        const auto size = std::filesystem::file_size(full);
        std::filesystem::resize_file(full, size / 2);
        VideoDecoder decoder(full.string());
        std::vector<uint8_t> rgba(128 * 96 * 4);
        CHECK_THROWS_WITH_AS(
            [&] {
                while (decoder.next(rgba)) {}
            }(),
            doctest::Contains("truncated"), Error);
        CHECK(decoder.frames_decoded() < 25);
    }
    {
        const auto path = make_video("small.mkv", "ffv1", 32, 16, 3);
        VideoDecoder decoder(path.string());
        std::vector<uint8_t> wrong(32 * 16 * 4 - 4);
        CHECK_THROWS_WITH_AS(decoder.next(wrong), doctest::Contains("bytes of RGBA8"), Error);
        CHECK(decoder.frames_decoded() == 0);
    }
}

// A server on the loopback that accepts connections (the kernel completes them from the
// backlog) and never sends a byte: the stalled stream a decoder must not wait on for ever.
struct SilentServer {
    int fd = -1;
    uint16_t port = 0;
    SilentServer() {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof address;
        REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0);
        REQUIRE(listen(fd, 8) == 0);
        REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0);
        port = ntohs(address.sin_port);
    }
    ~SilentServer() { close(fd); }
};

TEST_CASE("a stream that stalls fails after the stall timeout, and a cancel ends the wait") {
    const SilentServer server;
    const std::string url = "http://127.0.0.1:" + std::to_string(server.port) + "/clip.mp4";
    using Clock = std::chrono::steady_clock;
    auto start = Clock::now();
    CHECK_THROWS_WITH_AS(VideoDecoder(url, VideoDecoderOptions{.stall_timeout = 0.5}),
                         doctest::Contains("nothing arrived for 0.5 s: the source stalled"), Error);
    double waited = std::chrono::duration<double>(Clock::now() - start).count();
    CHECK(waited >= 0.5);
    CHECK(waited < 10.0);
    start = Clock::now();
    VideoDecoderOptions cancelling{.stall_timeout = 0};  // no timeout: only the cancel ends it
    cancelling.cancelled = [&] { return Clock::now() - start > std::chrono::milliseconds(300); };
    CHECK_THROWS_WITH_AS(VideoDecoder(url, cancelling), doctest::Contains("interrupted"), Error);
    waited = std::chrono::duration<double>(Clock::now() - start).count();
    CHECK(waited < 10.0);
    CHECK_THROWS_WITH_AS(VideoDecoder(url, VideoDecoderOptions{.stall_timeout = -1}),
                         doctest::Contains("0 (none) or more seconds"), Error);
}

TEST_CASE("Decoders opened and closed 300 times leave fds and memory flat") {
    const auto path = make_video("leak.mkv", "ffv1", 64, 48, 4);
    const auto fds = [] {
        return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                             std::filesystem::directory_iterator());
    };
    const auto rss_kib = [] {
        std::ifstream status("/proc/self/status");
        std::string key;
        long value = 0;
        while (status >> key)
            if (key == "VmRSS:") return (status >> value, value);
        return 0L;
    };
    std::vector<uint8_t> rgba(64 * 48 * 4);
    {
        VideoDecoder warm(path.string());
        while (warm.next(rgba)) {}
    }
    const auto fds_before = fds();
    const long rss_before = rss_kib();
    for (int i = 0; i < 300; ++i) {
        VideoDecoder decoder(path.string());
        while (decoder.next(rgba)) {}
    }
    CHECK(fds() == fds_before);
#if defined(__SANITIZE_ADDRESS__)
    (void)rss_before;  // AddressSanitizer's quarantine keeps freed memory; its leak check covers this
#else
    CHECK(rss_kib() < rss_before + 8 * 1024);  // 8 MiB of slack for allocator caches
#endif
}

TEST_CASE("the encoder refuses what it cannot write, leaving no file, and says why") {
    const auto path = scratch("refused.mp4");
    std::filesystem::remove(path);
    CHECK_THROWS_WITH_AS(VideoEncoder(scratch("x.notacontainer").string(), 64, 64), doctest::Contains("container"),
                         Error);
    CHECK_THROWS_WITH_AS(VideoEncoder(path.string(), 64, 64, {.codec = "no_such_codec"}),
                         doctest::Contains("no encoder 'no_such_codec'"), Error);
    CHECK_THROWS_WITH_AS(VideoEncoder(path.string(), 0, 64), doctest::Contains("[1, 16384]"), Error);
    CHECK_THROWS_WITH_AS(VideoEncoder(path.string(), 63, 64, {.codec = "mpeg4"}), doctest::Contains("even sides"),
                         Error);
    CHECK(!std::filesystem::exists(path));
    // Written under a temporary name (tvlm's all-or-nothing outputs): errors name the user's path.
    const auto staged = scratch(".out.mp4.tvlm-1-0.partial");
    CHECK_THROWS_WITH_AS(VideoEncoder(staged.string(), 0, 64, {.container_from = "out.mp4"}),
                         doctest::Contains("video 'out.mp4': frames of 0x64"), Error);
    try {
        VideoEncoder(staged.string(), 0, 64, {.container_from = "out.mp4"});
    } catch (const Error& e) { CHECK(std::string(e.what()).find("partial") == std::string::npos); }
    CHECK(!std::filesystem::exists(staged));
    VideoEncoder encoder(path.string(), 64, 64, {.codec = "mpeg4"});
    CHECK_THROWS_WITH_AS(encoder.write(std::vector<uint8_t>(10)), doctest::Contains("64x64 RGBA8 is 16384"), Error);
    encoder.write(std::vector<uint8_t>(64 * 64 * 4, 128));
    encoder.finish();
    CHECK_THROWS_WITH_AS(encoder.write(std::vector<uint8_t>(64 * 64 * 4)), doctest::Contains("after finish()"), Error);
    VideoDecoder decoder(path.string());
    CHECK(decoder.info().codec == "mpeg4");
}


// The whole path on real decoded frames, decoded straight into a VideoTexture: after every
// frame its levels equal a full upload and regeneration of the decoded frame. Lossless FFV1:
// only the square's tiles change, the first frame and the cut are replaced whole. Lossy
// MPEG-4: codec noise changes tiles everywhere a block was re-encoded (reported).
struct ClipRun {
    uint32_t frames = 0, whole = 0;
    double copied = 0;
};

ClipRun run_clip(Context& context, const char* codec, const std::string& name) {
    const TestClip clip{.width = 320, .height = 224, .frames = 24, .cut = 16};
    const auto path = scratch(name);
    {
        VideoEncoder encoder(path.string(), clip.width, clip.height, {.codec = codec});
        for (uint32_t f = 0; f < clip.frames; ++f) encoder.write(test_clip_frame(clip, f));
        encoder.finish();
    }
    VideoDecoder decoder(path.string());
    VideoTexture texture(context, clip.width, clip.height);
    Texture full = Texture::create(context, TextureDesc::sampled_2d(clip.width, clip.height, Format::rgba8_unorm));
    ClipRun run;
    for (;;) {
        std::span<std::byte> staging = texture.next_frame();
        if (!decoder.next({reinterpret_cast<uint8_t*>(staging.data()), staging.size()})) break;
        CAPTURE(run.frames);
        const std::vector<uint8_t> decoded(reinterpret_cast<const uint8_t*>(staging.data()),
                                           reinterpret_cast<const uint8_t*>(staging.data()) + staging.size());
        const FrameUpdate update = texture.update();
        run.whole += update.whole_frame;
        run.copied += update.copied_fraction;
        upload(context, full, host_pixels(decoded, clip.width, clip.height));
        generate_mips(context, full, MipFilter::box);
        for (uint32_t level = 0; level < full.levels(); ++level) {
            CAPTURE(level);
            CHECK(readback(context, texture.texture(), level) == readback(context, full, level));
        }
        ++run.frames;
    }
    CHECK(run.frames == clip.frames);
    MESSAGE(std::string(codec) << " clip: " << run.whole << " of " << run.frames << " frames replaced whole, "
                               << 100.0 * run.copied / run.frames << "% of texels copied per frame");
    return run;
}

TEST_CASE_FIXTURE(VulkanFixture, "decoded frames through a video texture equal full regenerations, frame by frame") {
    const ClipRun lossless = run_clip(context, "ffv1", "clip.mkv");
    CHECK(lossless.whole == 2);  // the first frame and the cut
    CHECK(lossless.copied / lossless.frames < 0.25);
    const ClipRun lossy = run_clip(context, "mpeg4", "clip.avi");
    CHECK(lossy.whole >= 2);
}

TEST_CASE("NVDEC is refused with the reason where it cannot run, and each decoder reads its own kind of frame") {
    const auto lossless = make_video("nvdec_ffv1.mkv", "ffv1", 64, 48, 3);
    // FFV1 has no NVDEC decoder on any machine.
    CHECK_THROWS_WITH_AS(VideoDecoder(lossless.string(), VideoDecoderOptions{.decode = VideoDecode::nvdec}),
                         doctest::Contains("cannot decode on NVDEC"), Error);
    const auto lossy = make_video("nvdec_mpeg4.avi", "mpeg4", 64, 48, 3);
    try {
        VideoDecoder decoder(lossy.string(), VideoDecoderOptions{.decode = VideoDecode::nvdec});
        CHECK(decoder.info().decoder.starts_with("NVDEC"));  // an NVIDIA machine
        std::vector<uint8_t> rgba(64 * 48 * 4);
        CHECK_THROWS_WITH_AS(decoder.next(rgba), doctest::Contains("next(DeviceFrame&)"), Error);
    } catch (const Error& e) {
        MESSAGE("NVDEC here: " << std::string(e.what()));
        CHECK(std::string(e.what()).find("NVDEC cannot start on CUDA device 0") != std::string::npos);
    }
    VideoDecoder cpu(lossy.string());
    CHECK(cpu.info().decoder == "CPU");
    DeviceFrame frame;
    CHECK_THROWS_WITH_AS(cpu.next(frame), doctest::Contains("next(span)"), Error);
}

TEST_CASE("H.264 with B-frames in MP4 decodes every frame written") {
    // The muxer's edit list once cost the last frame (29 of 30): VideoEncoder writes none.
    const auto path = make_video("bframes.mp4", "libx264", 96, 64, 30);
    VideoDecoder decoder(path.string());
    CHECK(decoder.info().frames == 30);
    std::vector<uint8_t> rgba(96 * 64 * 4);
    int frames = 0;
    while (decoder.next(rgba)) ++frames;
    CHECK(frames == 30);
}
