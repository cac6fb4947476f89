// main() of the OpenGL suite: exits 77 (CTest: skipped) with the reason when this machine
// has no EGL device that gives an OpenGL 4.5 core context, never passing vacuously.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <exception>

#include "interop/gl/egl_context.h"

int main(int argc, char** argv) {
    try {
        tvlm::EglContext probe;
    } catch (const std::exception& e) {
        std::printf("SKIPPED: this suite needs an EGL device with OpenGL 4.5: %s\n", e.what());
        return 77;
    }
    doctest::Context context(argc, argv);
    return context.run();
}
