// A processor resizer (cuda_pipelines/cuda_image_resizer.h) dropped while its run is still
// queued: its buffers are freed behind the run, in stream order, and dropping it does not
// wait for the device (cudaFree would wait for all of its work, stalling a server whose
// processor cache lets resizers go while its kernels are queued).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/cuda_handle.h"
#include "cuda/device_buffer.h"
#include "cuda_pipelines/cuda_image_resizer.h"
#include "tests/device_read_back.h"

using namespace tvlm;

namespace {

constexpr uint32_t kWidth = 1000, kHeight = 700;  // shrunk under 8x across: the two passes and their rows

// A bicubic resize of the whole image to `width` x `height` into `out` (float32 planar).
ResizeTarget target_of(uint32_t width, uint32_t height, float* out) {
    ResizeTarget t;
    t.resized_width = t.width = width;
    t.resized_height = t.height = height;
    t.image_stride = uint64_t{3} * width * height;
    t.round_to_byte = true;  // a uint8 image, as torch resizes it
    t.out = out;
    return t;
}

// Holds a stream on the host for a while: work queued behind it stays queued.
void CUDART_CB hold(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

}  // namespace

TEST_CASE("a resizer dropped behind its queued runs frees its buffers after them, without waiting for them") {
    const CudaStream stream = make_stream();
    std::vector<unsigned char> bytes(size_t{3} * kWidth * kHeight);
    std::mt19937 gen(7);
    for (unsigned char& b : bytes) b = static_cast<unsigned char>(gen() & 0xFF);
    const DeviceBuffer<unsigned char> image(bytes.size());
    copy_to_device_now(image.data(), bytes.data(), bytes.size());
    TensorView view;
    view.dtype = TensorDtype::u8;
    view.channels = 3;
    view.stride_x = 1, view.stride_y = kWidth, view.stride_c = int64_t{kWidth} * kHeight;
    view.stride_b = 3 * view.stride_c;
    const void* images[] = {image.data()};
    const ResizerShape shape{ResizeFilter::bicubic, TensorDtype::u8, 3, kWidth, kHeight, 1, 0, 1};
    // Two windows, so the run grows its span tables and rows twice.
    const uint32_t sizes[2][2] = {{224, 157}, {448, 313}};
    std::vector<std::vector<float>> want;
    for (const auto& size : sizes) {
        const DeviceBuffer<float> out(size_t{3} * size[0] * size[1]);
        const CudaImageResizer reference(shape);
        reference.run(view, {kWidth, kHeight}, images, target_of(size[0], size[1], out.data()), stream.get());
        want.push_back(read_back(out, stream.get()));
    }
    std::vector<DeviceBuffer<float>> outs;
    for (const auto& size : sizes) {
        outs.emplace_back(size_t{3} * size[0] * size[1]);
        TVLM_CUDA_CHECK(cudaMemset(outs.back().data(), 0xFF, outs.back().bytes()));  // NaN until written
    }
    TVLM_CUDA_CHECK(cudaDeviceSynchronize());
    TVLM_CUDA_CHECK(cudaLaunchHostFunc(stream.get(), hold, nullptr));
    {
        const CudaImageResizer dropped(shape);
        for (size_t k = 0; k < 2; ++k)
            dropped.run(view, {kWidth, kHeight}, images, target_of(sizes[k][0], sizes[k][1], outs[k].data()),
                        stream.get());
    }
    // Dropped without waiting: its runs are still queued behind the host function.
    CHECK(cudaStreamQuery(stream.get()) == cudaErrorNotReady);
    for (size_t k = 0; k < 2; ++k) CHECK(read_back(outs[k], stream.get()) == want[k]);
}
