#include "apps/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace tvlm {

Progress::Progress(std::string command)
    : command_(std::move(command)), shown_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { clear(); }

void Progress::clear() {
    if (shown_ && width_) std::fprintf(stderr, "\r%*s\r", int(width_), "");
    width_ = 0;
}

void Progress::step(const std::string& text) {
    if (!shown_) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    char line[512];
    const int n = std::snprintf(line, sizeof line, "%s: %s (%.0f s)", command_.c_str(), text.c_str(), seconds);
    const size_t width = n < 0 ? 0 : std::min(size_t(n), sizeof line - 1);
    // Pad over a longer previous line, then return to the line's start for the next step.
    std::fprintf(stderr, "\r%s%*s", line, int(width_ > width ? width_ - width : 0), "");
    std::fflush(stderr);
    width_ = width;
}

}  // namespace tvlm
