// Loads FFmpeg's libraries and functions on first use (ffmpeg_library.h).
#include <dlfcn.h>

#include <array>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>

#include "engine/error.h"
#include "engine/video_files/ffmpeg_library.h"

namespace tvlm::ffmpeg {

namespace {

enum Which { avutil, avcodec, avformat, swscale, kLibraries };

// Each library's soname and its Debian/Ubuntu package, from the headers' major versions.
struct Named {
    std::string soname, package;
};
std::array<Named, kLibraries> names() {
    const auto named = [](const char* name, int major) {
        return Named{"lib" + std::string(name) + ".so." + std::to_string(major),
                     "lib" + std::string(name) + std::to_string(major)};
    };
    return {named("avutil", LIBAVUTIL_VERSION_MAJOR), named("avcodec", LIBAVCODEC_VERSION_MAJOR),
            named("avformat", LIBAVFORMAT_VERSION_MAJOR), named("swscale", LIBSWSCALE_VERSION_MAJOR)};
}

std::string missing_text(const std::string& what) {
    std::string sonames, packages;
    for (const Named& n : names()) {
        sonames += (sonames.empty() ? "" : ", ") + n.soname;
        packages += " " + n.package;
    }
    return "video needs FFmpeg's shared libraries (" + sonames + "), and " + what +
           ": install them (Debian/Ubuntu: apt install" + packages + "), or put their folder on LD_LIBRARY_PATH";
}

// Loads every library and function, or throws; the handles stay open for the process.
Library load() {
    std::array<void*, kLibraries> handles{};
    const std::array<Named, kLibraries> named = names();
    for (size_t i = 0; i < kLibraries; ++i) {
        handles[i] = dlopen(named[i].soname.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handles[i]) {
            const std::string why = dlerror();
            for (void* h : handles)
                if (h) dlclose(h);
            throw Error(missing_text(named[i].soname + " did not load (" + why + ")"));
        }
    }
    Library library;
    std::string absent;
#define TVLM_FFMPEG_LOAD(which, name)                                                      \
    library.name = reinterpret_cast<decltype(library.name)>(dlsym(handles[which], #name)); \
    if (!library.name) absent += std::string(absent.empty() ? "" : ", ") + #name;
    TVLM_FFMPEG_FUNCTIONS(TVLM_FFMPEG_LOAD)
#undef TVLM_FFMPEG_LOAD
    if (!absent.empty()) {
        for (void* h : handles) dlclose(h);
        throw Error(missing_text("the ones found lack " + absent + " (another FFmpeg build?)"));
    }
    return library;
}

std::mutex loading;
std::optional<Library> loaded;  // set once; the libraries stay loaded for the process
std::atomic<bool> ready{false};

}  // namespace

const Library& library() {
    if (ready.load(std::memory_order_acquire)) return *loaded;  // every call after the first
    const std::lock_guard<std::mutex> lock(loading);
    if (!loaded) {
        loaded.emplace(load());
        ready.store(true, std::memory_order_release);
    }
    return *loaded;
}

std::string unavailable_reason() {
    try {
        library();
        return "";
    } catch (const Error& e) { return e.what(); }
}

}  // namespace tvlm::ffmpeg
