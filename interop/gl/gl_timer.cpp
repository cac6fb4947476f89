#include "interop/gl/gl_timer.h"

#include <utility>

namespace tvlm {

GlTimer::GlTimer(const EglContext& context) : gl_(&context.gl()) {
    gl_->glCreateQueries(GL_TIMESTAMP, 2, queries_);
    check_gl(*gl_, "glCreateQueries(GL_TIMESTAMP)");
}

GlTimer::GlTimer(GlTimer&& other) noexcept : gl_(other.gl_) { std::swap(queries_, other.queries_); }

GlTimer::~GlTimer() {
    if (queries_[0]) gl_->glDeleteQueries(2, queries_);
}

void GlTimer::begin() const { gl_->glQueryCounter(queries_[0], GL_TIMESTAMP); }

void GlTimer::end() const {
    gl_->glQueryCounter(queries_[1], GL_TIMESTAMP);
    check_gl(*gl_, "GL_TIMESTAMP query");
}

double GlTimer::milliseconds() const {
    GLuint64 start = 0, stop = 0;
    gl_->glGetQueryObjectui64v(queries_[0], GL_QUERY_RESULT, &start);  // waits for the result
    gl_->glGetQueryObjectui64v(queries_[1], GL_QUERY_RESULT, &stop);
    check_gl(*gl_, "glGetQueryObjectui64v");
    return static_cast<double>(stop - start) * 1e-6;
}

}  // namespace tvlm
