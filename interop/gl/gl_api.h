#pragma once
// The EGL and OpenGL entry points texturevlm uses, loaded at run time from the glvnd
// libraries (libEGL.so.1, libOpenGL.so.0), so a machine without them gets an error naming
// the packages instead of a binary that does not start. One table per process.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>

namespace tvlm {

#define TVLM_EGL_FUNCTIONS(X)                                    \
    X(PFNEGLQUERYDEVICESEXTPROC, eglQueryDevicesEXT)             \
    X(PFNEGLQUERYDEVICESTRINGEXTPROC, eglQueryDeviceStringEXT)   \
    X(PFNEGLQUERYDEVICEATTRIBEXTPROC, eglQueryDeviceAttribEXT)   \
    X(PFNEGLGETPLATFORMDISPLAYEXTPROC, eglGetPlatformDisplayEXT) \
    X(PFNEGLINITIALIZEPROC, eglInitialize)                       \
    X(PFNEGLQUERYSTRINGPROC, eglQueryString)                     \
    X(PFNEGLBINDAPIPROC, eglBindAPI)                             \
    X(PFNEGLCREATECONTEXTPROC, eglCreateContext)                 \
    X(PFNEGLDESTROYCONTEXTPROC, eglDestroyContext)               \
    X(PFNEGLMAKECURRENTPROC, eglMakeCurrent)                     \
    X(PFNEGLGETERRORPROC, eglGetError)

#define TVLM_GL_FUNCTIONS(X)                                   \
    X(PFNGLGETERRORPROC, glGetError)                           \
    X(PFNGLGETSTRINGPROC, glGetString)                         \
    X(PFNGLGETINTEGERVPROC, glGetIntegerv)                     \
    X(PFNGLCREATETEXTURESPROC, glCreateTextures)               \
    X(PFNGLDELETETEXTURESPROC, glDeleteTextures)               \
    X(PFNGLISTEXTUREPROC, glIsTexture)                         \
    X(PFNGLTEXTURESTORAGE2DPROC, glTextureStorage2D)           \
    X(PFNGLTEXTURESTORAGE3DPROC, glTextureStorage3D)           \
    X(PFNGLTEXTURESUBIMAGE2DPROC, glTextureSubImage2D)         \
    X(PFNGLTEXTURESUBIMAGE3DPROC, glTextureSubImage3D)         \
    X(PFNGLGENERATETEXTUREMIPMAPPROC, glGenerateTextureMipmap) \
    X(PFNGLGETTEXTURESUBIMAGEPROC, glGetTextureSubImage)       \
    X(PFNGLPIXELSTOREIPROC, glPixelStorei)                     \
    X(PFNGLCREATEQUERIESPROC, glCreateQueries)                 \
    X(PFNGLDELETEQUERIESPROC, glDeleteQueries)                 \
    X(PFNGLQUERYCOUNTERPROC, glQueryCounter)                   \
    X(PFNGLGETQUERYOBJECTUI64VPROC, glGetQueryObjectui64v)     \
    X(PFNGLFINISHPROC, glFinish)

struct GlApi {
    // Loads the libraries and resolves every entry point on first use; throws Error naming
    // the packages to install when a library or an entry point is missing.
    static const GlApi& get();

    PFNEGLGETPROCADDRESSPROC eglGetProcAddress = nullptr;
#define TVLM_DECLARE_ENTRY(type, name) type name = nullptr;
    TVLM_EGL_FUNCTIONS(TVLM_DECLARE_ENTRY)
    TVLM_GL_FUNCTIONS(TVLM_DECLARE_ENTRY)
#undef TVLM_DECLARE_ENTRY
};

// Throws Error naming the GL error if the last GL calls raised one (`what`: the operation).
void check_gl(const GlApi& gl, const char* what);

}  // namespace tvlm
