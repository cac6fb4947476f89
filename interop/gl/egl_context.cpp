#include "interop/gl/egl_context.h"

#include <cstdio>
#include <string>
#include <utility>

#include "engine/error.h"

namespace tvlm {

namespace {

std::string egl_error_text(EGLint error) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%04x", static_cast<unsigned>(error));
    return text;
}

bool has_extension(const std::string& list, const char* name) {
    const std::string padded = " " + list + " ";
    return padded.find(" " + std::string(name) + " ") != std::string::npos;
}

std::vector<EGLDeviceEXT> device_handles(const GlApi& gl) {
    EGLint count = 0;
    if (!gl.eglQueryDevicesEXT(0, nullptr, &count) || count <= 0) return {};
    std::vector<EGLDeviceEXT> devices(static_cast<size_t>(count));
    gl.eglQueryDevicesEXT(count, devices.data(), &count);
    devices.resize(static_cast<size_t>(count));
    return devices;
}

EglDevice describe(const GlApi& gl, EGLDeviceEXT handle, int index) {
    EglDevice d;
    d.index = index;
    const char* extensions = gl.eglQueryDeviceStringEXT(handle, EGL_EXTENSIONS);
    d.extensions = extensions ? extensions : "";
    d.software = has_extension(d.extensions, "EGL_MESA_device_software");
    EGLAttrib cuda = -1;
    if (has_extension(d.extensions, "EGL_NV_device_cuda") &&
        gl.eglQueryDeviceAttribEXT(handle, EGL_CUDA_DEVICE_NV, &cuda))
        d.cuda_device = static_cast<int>(cuda);
    return d;
}

}  // namespace

std::vector<EglDevice> egl_devices() {
    const GlApi& gl = GlApi::get();
    std::vector<EglDevice> out;
    const std::vector<EGLDeviceEXT> handles = device_handles(gl);
    for (size_t i = 0; i < handles.size(); ++i) out.push_back(describe(gl, handles[i], static_cast<int>(i)));
    return out;
}

EglContext::EglContext(const EglContextDesc& desc) : gl_(&GlApi::get()) {
    const GlApi& gl = *gl_;
    const std::vector<EGLDeviceEXT> handles = device_handles(gl);
    if (handles.empty())
        throw Error("EGL lists no devices: install the NVIDIA driver's EGL (libnvidia-egl*) or Mesa's libegl-mesa0");
    int chosen = desc.device;
    if (desc.cuda_device >= 0) {
        for (size_t i = 0; i < handles.size() && chosen < 0; ++i)
            if (describe(gl, handles[i], static_cast<int>(i)).cuda_device == desc.cuda_device)
                chosen = static_cast<int>(i);
        if (chosen < 0)
            throw Error("no EGL device belongs to CUDA device " + std::to_string(desc.cuda_device) +
                        " (EGL_NV_device_cuda): install the NVIDIA driver's EGL vendor library (libnvidia-egl*, "
                        "10_nvidia.json)");
    }
    if (chosen < 0) chosen = 0;
    if (chosen >= static_cast<int>(handles.size()))
        throw Error("EGL device " + std::to_string(chosen) + " does not exist: this machine has " +
                    std::to_string(handles.size()));
    device_ = describe(gl, handles[static_cast<size_t>(chosen)], chosen);

    display_ = gl.eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, handles[static_cast<size_t>(chosen)], nullptr);
    EGLint major = 0, minor = 0;
    if (display_ == EGL_NO_DISPLAY || !gl.eglInitialize(display_, &major, &minor))
        throw Error("cannot initialise EGL on device " + std::to_string(chosen) + " (EGL error " +
                    egl_error_text(gl.eglGetError()) + ")");
    const char* display_extensions = gl.eglQueryString(display_, EGL_EXTENSIONS);
    const std::string extensions = display_extensions ? display_extensions : "";
    if (!has_extension(extensions, "EGL_KHR_surfaceless_context") ||
        !has_extension(extensions, "EGL_KHR_no_config_context")) {
        throw Error("EGL device " + std::to_string(chosen) +
                    " cannot make surfaceless contexts without a config (EGL_KHR_surfaceless_context, "
                    "EGL_KHR_no_config_context): update the driver");
    }
    gl.eglBindAPI(EGL_OPENGL_API);
    const EGLint attributes[] = {
        EGL_CONTEXT_MAJOR_VERSION,           4,       EGL_CONTEXT_MINOR_VERSION, 5, EGL_CONTEXT_OPENGL_PROFILE_MASK,
        EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    context_ = gl.eglCreateContext(display_, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attributes);
    if (context_ == EGL_NO_CONTEXT || !gl.eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_)) {
        if (context_ != EGL_NO_CONTEXT) gl.eglDestroyContext(display_, context_);
        throw Error("EGL device " + std::to_string(chosen) + " refuses an OpenGL 4.5 core context: update the driver");
    }
}

EglContext::EglContext(EglContext&& other) noexcept
    : gl_(other.gl_),
      device_(std::move(other.device_)),
      display_(std::exchange(other.display_, EGL_NO_DISPLAY)),
      context_(std::exchange(other.context_, EGL_NO_CONTEXT)) {}

EglContext::~EglContext() {
    if (context_ == EGL_NO_CONTEXT) return;
    gl_->eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    gl_->eglDestroyContext(display_, context_);
    // The display stays initialised: EGL shares one per device among all its users.
}

std::string EglContext::renderer() const { return reinterpret_cast<const char*>(gl_->glGetString(GL_RENDERER)); }

std::string EglContext::version() const { return reinterpret_cast<const char*>(gl_->glGetString(GL_VERSION)); }

int EglContext::max_texture_size() const {
    GLint v = 0;
    gl_->glGetIntegerv(GL_MAX_TEXTURE_SIZE, &v);
    return v;
}

int EglContext::max_array_layers() const {
    GLint v = 0;
    gl_->glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &v);
    return v;
}

}  // namespace tvlm
