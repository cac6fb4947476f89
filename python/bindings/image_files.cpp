// Encoded images (PNG and JPEG bytes, or files) decoded for the processors: the whole list
// at once, one image a thread up to the machine's cores, with the GIL released.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "python/bindings/arrays.h"
#include "python/bindings/bindings.h"
#include "engine/error.h"
#include "engine/image_files/image_files.h"
#include "engine/processors/in_parts.h"

namespace tvlm::py {

namespace {

// One source: a buffer held (bytes, bytearray, memoryview) or a path to read.
struct Source {
    Py_buffer view{};
    bool held = false;
    std::string path;
    Source() = default;
    Source(const Source&) = delete;
    Source& operator=(const Source&) = delete;
    ~Source() {
        if (held) PyBuffer_Release(&view);
    }
};

std::vector<NumpyArray> decode_images(const std::vector<nb::object>& sources, const std::vector<std::string>& names) {
    if (sources.size() != names.size())
        throw Error("decode_images: " + std::to_string(sources.size()) + " sources and " +
                    std::to_string(names.size()) + " names; pass one name per source");
    std::vector<Source> held(sources.size());
    for (size_t i = 0; i < sources.size(); ++i) {
        if (nb::isinstance<nb::str>(sources[i])) {
            held[i].path = nb::cast<std::string>(sources[i]);
        } else if (PyObject_GetBuffer(sources[i].ptr(), &held[i].view, PyBUF_SIMPLE) == 0) {
            held[i].held = true;
        } else {
            PyErr_Clear();
            throw Error("'" + names[i] + "' is a " + nb::type_name(sources[i].type()).c_str() +
                        ": encoded images are bytes, bytearray, memoryview or file paths");
        }
    }
    std::vector<std::optional<RgbPixels>> decoded(sources.size());
    std::vector<std::string> errors(sources.size());
    {
        nb::gil_scoped_release released;
        std::atomic<size_t> next{0};
        auto work = [&] {
            for (size_t i = next++; i < held.size(); i = next++) {
                try {
                    const Source& s = held[i];
                    decoded[i] = s.held ? decode_image_rgb(static_cast<const uint8_t*>(s.view.buf),
                                                           static_cast<size_t>(s.view.len), names[i])
                                        : load_image_rgb(s.path);
                } catch (const std::bad_alloc&) {
                    errors[i] = "out of host memory decoding '" + names[i] + "'";
                } catch (const std::exception& e) { errors[i] = e.what(); }
            }
        };
        // On the engine's kept pool of threads, each taking the next image (a thread that
        // cannot be started leaves its share to the others).
        const int64_t threads = std::min<int64_t>(int64_t(held.size()),
                                                  std::max(1u, std::thread::hardware_concurrency()));
        run_parts(threads, [&](int64_t) { work(); });
    }
    for (const std::string& error : errors)
        if (!error.empty()) throw Error(error);  // the first failing image, in the caller's order
    std::vector<NumpyArray> arrays;
    arrays.reserve(decoded.size());
    for (std::optional<RgbPixels>& d : decoded)
        arrays.push_back(owned_array(std::move(d->bytes), {d->height, d->width, d->channels}, nb::dtype<uint8_t>()));
    return arrays;
}

// "jpeg" or "png" for each whole, well-formed encoded image (check_encoded_image).
std::vector<std::string> check_encoded_images(const std::vector<nb::bytes>& sources,
                                              const std::vector<std::string>& names) {
    if (sources.size() != names.size())
        throw Error("check_encoded_images: " + std::to_string(sources.size()) + " sources and " +
                    std::to_string(names.size()) + " names; pass one name per source");
    std::vector<std::string> formats;
    formats.reserve(sources.size());
    for (size_t i = 0; i < sources.size(); ++i) {
        const auto* bytes = static_cast<const uint8_t*>(sources[i].data());
        formats.emplace_back(check_encoded_image(bytes, sources[i].size(), names[i]) == EncodedFormat::jpeg ? "jpeg"
                                                                                                            : "png");
    }
    return formats;
}

}  // namespace

void bind_image_files(nb::module_& m) {
    m.def("decode_images", &decode_images, nb::arg("sources"), nb::arg("names"),
          "PNG / JPEG images (bytes-like objects or file paths) decoded on the host, in parallel: uint8 "
          "[H, W, 3], or [H, W, 4] where an image has transparency. Raises Error naming the first image "
          "(by `names`) that is missing, corrupt, truncated, of another format or over the size limits.");
    m.def("check_encoded_images", &check_encoded_images, nb::arg("sources"), nb::arg("names"),
          "'jpeg' or 'png' for each encoded image whose structure is whole (every JPEG segment and scan up "
          "to its end-of-image marker, every PNG chunk up to IEND), walked without decoding; raises Error "
          "naming the first image of another format or whose data is truncated or broken.");
}

}  // namespace tvlm::py
