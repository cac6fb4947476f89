#pragma once
// Move-only owner of two GL_TIMESTAMP queries: GPU time of the GL commands between begin()
// and end(), for benchmarks (the GL counterpart of engine/core/gpu_timer.h). Timestamps, not a
// GL_TIME_ELAPSED query: llvmpipe's elapsed-time query returned seconds for milliseconds
// of work.
#include "interop/gl/egl_context.h"

namespace tvlm {

class GlTimer {
public:
    explicit GlTimer(const EglContext& context);
    GlTimer(GlTimer&& other) noexcept;
    GlTimer& operator=(GlTimer&&) = delete;
    GlTimer(const GlTimer&) = delete;
    GlTimer& operator=(const GlTimer&) = delete;
    ~GlTimer();

    void begin() const;
    void end() const;
    // Milliseconds between begin() and end(); waits for the GL work to finish.
    double milliseconds() const;

private:
    const GlApi* gl_ = nullptr;
    GLuint queries_[2] = {0, 0};
};

}  // namespace tvlm
