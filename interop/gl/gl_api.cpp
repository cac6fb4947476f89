#include "interop/gl/gl_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "engine/error.h"

namespace tvlm {

namespace {

constexpr const char* kPackages =
    "install the glvnd loaders and a vendor implementation: Debian/Ubuntu `apt-get install libegl1 libopengl0` "
    "plus the NVIDIA driver's EGL (libnvidia-egl*, or the driver's 10_nvidia.json EGL vendor) or Mesa's "
    "libegl-mesa0 + libgl1-mesa-dri";

void* open_library(const char* name) {
    void* handle = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (!handle) throw Error(std::string("cannot load ") + name + " (" + dlerror() + "): " + kPackages);
    return handle;  // kept for the process: GL drivers are not unloaded
}

// TVLM_EGL_LIBRARY / TVLM_OPENGL_LIBRARY name other libraries (tests use a missing one).
const char* library_name(const char* variable, const char* fallback) {
    const char* value = std::getenv(variable);
    return value && *value ? value : fallback;
}

GlApi load() {
    void* egl = open_library(library_name("TVLM_EGL_LIBRARY", "libEGL.so.1"));
    open_library(library_name("TVLM_OPENGL_LIBRARY", "libOpenGL.so.0"));  // GL resolves through EGL once loaded
    GlApi api;
    api.eglGetProcAddress = reinterpret_cast<PFNEGLGETPROCADDRESSPROC>(dlsym(egl, "eglGetProcAddress"));
    if (!api.eglGetProcAddress) throw Error(std::string("libEGL.so.1 has no eglGetProcAddress: ") + kPackages);
    const auto resolve = [&](auto& slot, const char* name) {
        slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(api.eglGetProcAddress(name));
        if (!slot) throw Error(std::string("the EGL/OpenGL libraries lack ") + name + ": " + kPackages);
    };
#define TVLM_RESOLVE_ENTRY(type, name) resolve(api.name, #name);
    TVLM_EGL_FUNCTIONS(TVLM_RESOLVE_ENTRY)
    TVLM_GL_FUNCTIONS(TVLM_RESOLVE_ENTRY)
#undef TVLM_RESOLVE_ENTRY
    return api;
}

const char* gl_error_name(GLenum error) {
    switch (error) {
        case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
        case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
        case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
        case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
        case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
        default: return "an unknown GL error";
    }
}

}  // namespace

const GlApi& GlApi::get() {
    static const GlApi api = load();  // a throw here is retried on the next call
    return api;
}

void check_gl(const GlApi& gl, const char* what) {
    const GLenum error = gl.glGetError();
    if (error == GL_NO_ERROR) return;
    while (gl.glGetError() != GL_NO_ERROR) {}  // GL may queue several
    throw Error(std::string(what) + " failed with " + gl_error_name(error));
}

}  // namespace tvlm
