// The CUDA backend for CUDA tensors: CudaPyramid (cuda_pipelines/cuda_pyramid.h) driven with
// the typed arguments of cuda_arguments.cpp (TensorView, CudaPatchSampler) and the caller's
// stream, so a call costs a few launches and no host sync. The Python side checks shapes,
// dtypes and devices before it makes those arguments.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "python/bindings/arrays.h"
#include "python/bindings/bindings.h"
#include "engine/error.h"
#ifdef TVLM_HAVE_CUDA
#include "python/bindings/cuda_calls.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_handle.h"
#include "cuda_pipelines/cuda_patch_sampler.h"
#include "cuda_pipelines/cuda_pyramid.h"
#include "cuda_pipelines/cuda_tensor_mips.h"
#include "cuda_pipelines/replayed_launches.h"
#include "cuda/device_buffer.h"
#include "cuda/stream_capture.h"
#include "engine/sampling/patch.h"
#endif

namespace tvlm::py {

#ifdef TVLM_HAVE_CUDA
namespace {

class CudaPyramidBinding {
public:
    CudaPyramidBinding(int device, uint32_t width, uint32_t height, uint32_t layers, const std::string& format,
                       uint32_t levels)
        : device_(device), pyramid_(make(device, {width, height, layers, levels, parse_format(format), false})) {}

    void write(const TensorView& tensor, uint32_t x, uint32_t y, uint32_t width, uint32_t height, uint32_t first_layer,
               uint32_t layers, uintptr_t stream) const {
        const DeviceGuard guard(device_);
        pyramid_.write(tensor, {x, y, width, height, first_layer, layers}, stream_of(stream));
    }
    void generate_mipmaps(uintptr_t stream) const {
        const DeviceGuard guard(device_);
        pyramid_.generate_mips(stream_of(stream));
    }
    void update_mipmaps(uint32_t x, uint32_t y, uint32_t width, uint32_t height, uint32_t first_layer, uint32_t layers,
                        uintptr_t stream) const {
        const DeviceGuard guard(device_);
        pyramid_.update_mips({x, y, width, height, first_layer, layers}, stream_of(stream));
    }
    void read(uint32_t level, uint32_t first_layer, uint32_t layers, const TensorView& tensor, uintptr_t stream) const {
        const DeviceGuard guard(device_);
        pyramid_.read(level, first_layer, layers, tensor, stream_of(stream));
    }
    // Every patch of `sampler`'s layout into `out` ([patches, C, P, P], `out_bytes` long).
    void sample(const CudaPatchSampler& sampler, uintptr_t out, size_t out_bytes, uint32_t channels, bool half,
                uintptr_t stream) const {
        const DeviceGuard guard(device_);
        sampler.sample(pyramid_.desc(), pyramid_.texture_object(sampler.gradients()),
                       {reinterpret_cast<void*>(out), out_bytes, {channels, half}}, stream_of(stream));
    }
    // An image processor's output from the texture (cuda/processors/image_resize.h) into `out` (a
    // copy of the target is written to, so one kept target serves every call and thread).
    void resize(const ResizeTarget& target, uintptr_t out, uintptr_t stream) const {
        const DeviceGuard guard(device_);
        ResizeTarget into = target;
        into.out = reinterpret_cast<void*>(out);
        pyramid_.resize(into, stream_of(stream));
    }
    // A whole frame in, its box mips, the layout's patches out: the per-frame work in one
    // call (one Python -> C++ crossing for its launches), replayed as one graph once a call
    // repeats (ReplayedLaunches: a serving loop reads the same buffers call after call).
    void frame_to_patches(const TensorView& frame, const CudaPatchSampler& sampler, uintptr_t out, size_t out_bytes,
                          bool half, uintptr_t stream) const {
        const DeviceGuard guard(device_);
        const TextureDesc& d = pyramid_.desc();
        const PatchTarget target{reinterpret_cast<void*>(out), out_bytes, {frame.channels, half}};
        sampler.check(d, target);  // refused before anything is launched or replayed
        const ReplayedLaunches::Key key{1,
                                        reinterpret_cast<uint64_t>(frame.data),
                                        uint64_t(frame.dtype),
                                        uint64_t(frame.stride_b),
                                        uint64_t(frame.stride_c),
                                        uint64_t(frame.stride_y),
                                        uint64_t(frame.stride_x),
                                        frame.channels,
                                        sampler.serial(),
                                        out,
                                        out_bytes,
                                        half};
        replayed_.run(key, stream_of(stream), [&](cudaStream_t s) {
            pyramid_.load_frame(frame, s);
            sampler.sample(d, pyramid_.texture_object(sampler.gradients()), target, s);
        });
    }
    int device() const { return device_; }
    uint32_t levels() const { return pyramid_.desc().mip_levels(); }
    size_t replay_graphs() const { return replayed_.graphs(); }

private:
    static CudaPyramid make(int device, const TextureDesc& desc) {
        const DeviceGuard guard(device);
        return CudaPyramid(desc);
    }
    int device_;
    CudaPyramid pyramid_;
    mutable ReplayedLaunches replayed_;
};

// Levels 1.. of a tensor's box chain into tensors of its dtype and layout (`levels`: each
// level's (data pointer, strides in elements (b, c, y, x))), no texture in between.
void tensor_mipmaps(int device, const TensorView& tensor, uint32_t layers, uint32_t width, uint32_t height,
                    const std::vector<TensorView>& levels, uintptr_t stream) {
    const DeviceGuard guard(device);
    generate_tensor_mips(tensor, width, height, layers, levels, stream_of(stream));
}

// A CUDA event for ordering work across streams without the host: record() after work on
// one stream, wait() makes another stream's later work wait for it (the video ring).
class CudaEventBinding {
public:
    explicit CudaEventBinding(int device) : device_(device) {
        const DeviceGuard guard(device);
        cudaEvent_t event = nullptr;
        TVLM_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
        event_ = CudaEvent(event);
    }
    void record(uintptr_t stream) const {
        const DeviceGuard guard(device_);
        TVLM_CUDA_CHECK(cudaEventRecord(event_.get(), stream_of(stream)));
    }
    void wait(uintptr_t stream) const {
        const DeviceGuard guard(device_);
        TVLM_CUDA_CHECK(cudaStreamWaitEvent(stream_of(stream), event_.get(), 0));
    }

private:
    int device_;
    CudaEvent event_;
};

// Device memory owned by Python, handed out through DLPack (nb::ndarray on the CUDA device).
struct CudaBlock {
    DeviceBuffer<unsigned char> buffer;
    int device;
    ~CudaBlock() {
        const DeviceGuard guard(device);
        buffer.reset();
    }
};

// A layout's patch records copied once to one device's memory (layouts are reused).
// Returns (array, pointer): the pointer comes from here, not from a DLPack round trip,
// which hands the buffer to its importer (and its deleter) once.
nb::tuple cuda_copy(int device, nb::ndarray<nb::device::cpu, nb::c_contig, nb::ro> host) {
    const DeviceGuard guard(device);
    const size_t bytes = host.nbytes();
    auto* block = new CudaBlock{DeviceBuffer<unsigned char>(bytes ? bytes : 1), device};
    nb::capsule owner(block, [](void* p) noexcept { delete static_cast<CudaBlock*>(p); });
    copy_to_device_now(block->buffer.data(), host.data(), bytes);
    std::vector<size_t> shape(host.ndim());
    for (size_t i = 0; i < host.ndim(); ++i) shape[i] = host.shape(i);
    nb::ndarray<> array(block->buffer.data(), shape.size(), shape.data(), owner, nullptr, host.dtype(),
                        nb::device::cuda::value, device);
    return nb::make_tuple(array, reinterpret_cast<uintptr_t>(block->buffer.data()));
}

// Uninitialised device memory of `shape` and `dtype`, for frameworks other than torch:
// (array, pointer) as cuda_copy.
nb::tuple cuda_empty(int device, const std::vector<size_t>& shape, const std::string& dtype) {
    nb::dlpack::dtype d;
    if (dtype == "float32") d = nb::dtype<float>();
    else if (dtype == "float16") d = component_dtype(ComponentType::f16);
    else if (dtype == "uint8") d = nb::dtype<uint8_t>();
    else if (dtype == "bfloat16") d = {uint8_t(nb::dlpack::dtype_code::Bfloat), 16, 1};
    else throw Error("no CUDA buffers of dtype " + dtype);
    size_t count = 1;
    for (size_t s : shape) count *= s;
    const DeviceGuard guard(device);
    auto* block = new CudaBlock{DeviceBuffer<unsigned char>(count * d.bits / 8 + 1), device};
    nb::capsule owner(block, [](void* p) noexcept { delete static_cast<CudaBlock*>(p); });
    nb::ndarray<> array(block->buffer.data(), shape.size(), shape.data(), owner, nullptr, d, nb::device::cuda::value,
                        device);
    return nb::make_tuple(array, reinterpret_cast<uintptr_t>(block->buffer.data()));
}

}  // namespace

void bind_cuda(nb::module_& m) {
    m.def(
        "cuda_built", [] { return true; }, "Whether texturevlm was built with the CUDA backend.");
    nb::class_<CudaPyramidBinding>(m, "CudaPyramid", "A mip pyramid in a CUDA mipmapped array, fed from tensors.")
        .def(nb::init<int, uint32_t, uint32_t, uint32_t, const std::string&, uint32_t>(), nb::arg("device"),
             nb::arg("width"), nb::arg("height"), nb::arg("layers"), nb::arg("format"), nb::arg("levels"))
        .def("write", &CudaPyramidBinding::write, nb::arg("tensor"), nb::arg("x"), nb::arg("y"), nb::arg("width"),
             nb::arg("height"), nb::arg("first_layer"), nb::arg("layers"), nb::arg("stream"))
        .def("generate_mipmaps", &CudaPyramidBinding::generate_mipmaps, nb::arg("stream"))
        .def("update_mipmaps", &CudaPyramidBinding::update_mipmaps, nb::arg("x"), nb::arg("y"), nb::arg("width"),
             nb::arg("height"), nb::arg("first_layer"), nb::arg("layers"), nb::arg("stream"))
        .def("read", &CudaPyramidBinding::read, nb::arg("level"), nb::arg("first_layer"), nb::arg("layers"),
             nb::arg("tensor"), nb::arg("stream"))
        .def("sample", &CudaPyramidBinding::sample, nb::arg("sampler"), nb::arg("out"), nb::arg("out_bytes"),
             nb::arg("channels"), nb::arg("half"), nb::arg("stream"))
        .def("frame_to_patches", &CudaPyramidBinding::frame_to_patches, nb::arg("frame"), nb::arg("sampler"),
             nb::arg("out"), nb::arg("out_bytes"), nb::arg("half"), nb::arg("stream"))
        .def_prop_ro("replay_graphs", &CudaPyramidBinding::replay_graphs,
                     "frame_to_patches calls kept as graphs (a repeated call replays one)")
        .def("resize", &CudaPyramidBinding::resize, nb::arg("target"), nb::arg("out"), nb::arg("stream"),
             "An image processor's output from the texture into `out` (the target's own out is not read): one "
             "anisotropic trilinear sample per pixel.")
        .def_prop_ro("device", &CudaPyramidBinding::device)
        .def_prop_ro("levels", &CudaPyramidBinding::levels);
    m.def("tensor_mipmaps", &tensor_mipmaps, nb::arg("device"), nb::arg("tensor"), nb::arg("layers"), nb::arg("width"),
          nb::arg("height"), nb::arg("levels"), nb::arg("stream"),
          "Levels 1.. of a CUDA tensor's box chain into CUDA tensors of its dtype (one TensorView per level).");
    nb::class_<CudaEventBinding>(m, "CudaEvent", "A CUDA event: record() on one stream, wait() on another.")
        .def(nb::init<int>(), nb::arg("device"))
        .def("record", &CudaEventBinding::record, nb::arg("stream"), "Marks the work enqueued so far on `stream`.")
        .def("wait", &CudaEventBinding::wait, nb::arg("stream"),
             "Later work on `stream` waits for the last record() (no host wait).");
    m.def(
        "cuda_synchronize",
        [](int device, uintptr_t stream) {
            const DeviceGuard guard(device);
            nb::gil_scoped_release unlocked;
            TVLM_CUDA_CHECK(cudaStreamSynchronize(stream_of(stream)));
        },
        nb::arg("device"), nb::arg("stream"),
        "Waits on the host for `stream`: for frameworks that take no stream with their arrays (JAX).");
    m.def(
        "stream_capturing", [](uintptr_t stream) { return stream_capturing(stream_of(stream)); }, nb::arg("stream"),
        "Whether work queued on `stream` now would be captured into a CUDA graph.");
    m.def("cuda_copy", &cuda_copy, nb::arg("device"), nb::arg("host"),
          "A copy of a host array in CUDA device memory: (DLPack array, data pointer).");
    m.def("cuda_empty", &cuda_empty, nb::arg("device"), nb::arg("shape"), nb::arg("dtype"),
          "Uninitialised CUDA device memory: (DLPack array, data pointer), for frameworks other than torch.");
}

#else

void bind_cuda(nb::module_& m) {
    m.def(
        "cuda_built", [] { return false; }, "Whether texturevlm was built with the CUDA backend.");
}

#endif

}  // namespace tvlm::py
