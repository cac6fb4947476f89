#pragma once
// A headless OpenGL 4.5 core context: EGL on the device platform (no X, no window, no
// surface), on the EGL device that matches a CUDA device where the driver says so
// (EGL_NV_device_cuda), else on the device asked for. Move-only; current on the thread
// that made it (GL work happens on that one thread).
#include <string>
#include <vector>

#include "interop/gl/gl_api.h"

namespace tvlm {

struct EglDevice {
    int index = 0;
    std::string extensions;  // EGL_EXTENSIONS of the device
    int cuda_device = -1;    // CUDA ordinal from EGL_NV_device_cuda, or -1
    bool software = false;   // EGL_MESA_device_software (llvmpipe)
};

// The EGL devices of this machine (empty where EGL has no device enumeration). Throws Error
// when the EGL/OpenGL libraries are missing.
std::vector<EglDevice> egl_devices();

struct EglContextDesc {
    int cuda_device = -1;  // >= 0: the EGL device of this CUDA device, or an error
    int device = -1;       // >= 0: this EGL device index; -1: the first (or the CUDA match)
};

class EglContext {
public:
    // Throws Error saying what to install or choose when there is no suitable device or
    // the driver refuses a 4.5 core context.
    explicit EglContext(const EglContextDesc& desc = {});
    EglContext(EglContext&& other) noexcept;
    EglContext& operator=(EglContext&&) = delete;
    EglContext(const EglContext&) = delete;
    EglContext& operator=(const EglContext&) = delete;
    ~EglContext();

    const GlApi& gl() const { return *gl_; }
    const EglDevice& device() const { return device_; }
    std::string renderer() const;  // GL_RENDERER
    std::string version() const;   // GL_VERSION
    int max_texture_size() const;
    int max_array_layers() const;

private:
    const GlApi* gl_ = nullptr;
    EglDevice device_;
    EGLDisplay display_ = EGL_NO_DISPLAY;
    EGLContext context_ = EGL_NO_CONTEXT;
};

}  // namespace tvlm
