// A software resizer of any size (cuda_pipelines/cuda_image_resizer.h, shape 0 x 0), which a
// processor's first sight of an image size runs on: each run's outputs equal, bit for bit,
// those of a resizer made for that size, through sizes and windows in turn (its span tables
// rewritten and reused, its rows grown), a repeated run (replayed as a graph) and both
// filters; and the sizes each kind of resizer refuses.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/cuda_handle.h"
#include "cuda/device_buffer.h"
#include "cuda_pipelines/cuda_image_resizer.h"
#include "engine/error.h"
#include "tests/device_read_back.h"

using namespace tvlm;

namespace {

struct Job {
    Extent2D source;
    uint32_t resized_width, resized_height;
    int32_t crop_x, crop_y;  // a window of the resized image, which may reach past it
    uint32_t width, height;
};

// Shrinks (by more and less than 8x: the fused kernel and the two passes), an enlargement,
// a crop, and AnyRes's padding past the resized image; the first again at the end (its
// tables were rewritten by then: the least recently used of four).
const Job kJobs[] = {
    {{1000, 700}, 224, 157, 0, 0, 224, 157},  {{2048, 1536}, 224, 168, 0, 0, 224, 168},
    {{333, 517}, 448, 696, 0, 124, 448, 448}, {{640, 480}, 336, 252, 0, -42, 336, 336},
    {{1000, 700}, 300, 210, 38, 0, 224, 210}, {{720, 1280}, 200, 356, 0, 0, 200, 356},
    {{1000, 700}, 224, 157, 0, 0, 224, 157},
};

ResizeTarget target_of(const Job& job, float* out) {
    ResizeTarget t;
    t.resized_width = job.resized_width;
    t.resized_height = job.resized_height;
    t.crop_x = job.crop_x;
    t.crop_y = job.crop_y;
    t.width = job.width;
    t.height = job.height;
    t.image_stride = uint64_t{3} * job.width * job.height;
    t.round_to_byte = true;  // uint8 images, as torch resizes them
    t.multiply = 1.0f / 255;
    t.out = out;
    return t;
}

TensorView planar_u8(Extent2D size) {
    TensorView view;
    view.dtype = TensorDtype::u8;
    view.channels = 3;
    view.stride_x = 1, view.stride_y = size.width, view.stride_c = int64_t{size.width} * size.height;
    view.stride_b = 3 * view.stride_c;
    return view;
}

DeviceBuffer<float> poisoned(size_t values) {
    DeviceBuffer<float> out(values);
    TVLM_CUDA_CHECK(cudaMemset(out.data(), 0xFF, out.bytes()));  // NaN until written
    return out;
}

}  // namespace

TEST_CASE("a resizer of any size writes what a resizer of each size writes, bit for bit") {
    const CudaStream stream = make_stream();
    std::mt19937 gen(11);
    std::vector<DeviceBuffer<unsigned char>> images;
    for (const Job& job : kJobs) {
        std::vector<unsigned char> bytes(size_t{3} * job.source.width * job.source.height);
        for (unsigned char& b : bytes) b = static_cast<unsigned char>(gen() & 0xFF);
        images.emplace_back(bytes.size());
        copy_to_device_now(images.back().data(), bytes.data(), bytes.size());
    }
    for (const ResizeFilter filter : {ResizeFilter::bicubic, ResizeFilter::bilinear}) {
        CAPTURE(int(filter));
        std::vector<std::vector<float>> want;
        for (size_t k = 0; k < std::size(kJobs); ++k) {
            const Job& job = kJobs[k];
            const CudaImageResizer sized({filter, TensorDtype::u8, 3, job.source.width, job.source.height, 1, 0, 1});
            DeviceBuffer<float> out = poisoned(size_t{3} * job.width * job.height);
            const void* pointers[] = {images[k].data()};
            sized.run(planar_u8(job.source), job.source, pointers, target_of(job, out.data()), stream.get());
            want.push_back(read_back(out, stream.get()));
        }
        const CudaImageResizer any({filter, TensorDtype::u8, 3, 0, 0, 8, 0, 1});
        // Twice through: the second pass repeats each run's arguments (replayed as graphs
        // where its tables were not rewritten between).
        for (int pass = 0; pass < 2; ++pass) {
            std::vector<DeviceBuffer<float>> outs;
            for (size_t k = 0; k < std::size(kJobs); ++k) {
                const Job& job = kJobs[k];
                outs.push_back(poisoned(size_t{3} * job.width * job.height));
                const void* pointers[] = {images[k].data()};
                any.run(planar_u8(job.source), job.source, pointers, target_of(job, outs.back().data()), stream.get());
            }
            for (size_t k = 0; k < std::size(kJobs); ++k) {
                CAPTURE(pass);
                CAPTURE(k);
                CHECK(read_back(outs[k], stream.get()) == want[k]);
            }
        }
    }
}

TEST_CASE("runs that are never replayed write what replayed runs write, and keep no graph") {
    const CudaStream stream = make_stream();
    const Job& job = kJobs[0];
    std::vector<unsigned char> bytes(size_t{3} * job.source.width * job.source.height);
    std::mt19937 gen(12);
    for (unsigned char& b : bytes) b = static_cast<unsigned char>(gen() & 0xFF);
    const DeviceBuffer<unsigned char> image(bytes.size());
    copy_to_device_now(image.data(), bytes.data(), bytes.size());
    const void* pointers[] = {image.data()};
    for (const CudaImageResizer::Replay replay :
         {CudaImageResizer::Replay::repeated, CudaImageResizer::Replay::never}) {
        CAPTURE(int(replay));
        const CudaImageResizer resizer(
            {ResizeFilter::bicubic, TensorDtype::u8, 3, job.source.width, job.source.height, 1, 0, 1});
        DeviceBuffer<float> first = poisoned(size_t{3} * job.width * job.height);
        resizer.run(planar_u8(job.source), job.source, pointers, target_of(job, first.data()), stream.get(), replay);
        const std::vector<float> want = read_back(first, stream.get());
        // The same arguments twice more: the second sight is captured and replayed, the
        // third replays, where runs are replayed at all.
        DeviceBuffer<float> out = poisoned(size_t{3} * job.width * job.height);
        for (int repeat = 0; repeat < 3; ++repeat) {
            TVLM_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xFF, out.bytes(), stream.get()));
            resizer.run(planar_u8(job.source), job.source, pointers, target_of(job, out.data()), stream.get(), replay);
            CHECK(read_back(out, stream.get()) == want);
        }
        CHECK(resizer.replay_graphs() == (replay == CudaImageResizer::Replay::never ? 0u : 1u));
    }
}

TEST_CASE("resizers refuse images of a size not theirs, and a texture resizer needs one") {
    const CudaStream stream = make_stream();
    const DeviceBuffer<unsigned char> image(size_t{3} * 64 * 48);
    DeviceBuffer<float> out = poisoned(size_t{3} * 32 * 24);
    const Job job{{64, 48}, 32, 24, 0, 0, 32, 24};
    const void* pointers[] = {image.data()};
    const CudaImageResizer sized({ResizeFilter::bicubic, TensorDtype::u8, 3, 64, 48, 1, 0, 1});
    CHECK_THROWS_AS(sized.run(planar_u8({64, 48}), {48, 64}, pointers, target_of(job, out.data()), stream.get()),
                    Error);
    CHECK_THROWS_AS(sized.run(planar_u8({64, 48}), {0, 0}, pointers, target_of(job, out.data()), stream.get()), Error);
    const CudaImageResizer any({ResizeFilter::bilinear, TensorDtype::u8, 3, 0, 0, 1, 0, 1});
    CHECK_THROWS_AS(any.run(planar_u8({64, 48}), {0, 48}, pointers, target_of(job, out.data()), stream.get()), Error);
    CHECK_THROWS_AS(CudaImageResizer({ResizeFilter::texture, TensorDtype::u8, 3, 0, 0, 1, 0, 1}), Error);
    CHECK_THROWS_AS(CudaImageResizer({ResizeFilter::bicubic, TensorDtype::u8, 3, 64, 0, 1, 0, 1}), Error);
    // Nothing was written by the refused runs.
    for (const float v : read_back(out, stream.get())) REQUIRE(v != v);
}
