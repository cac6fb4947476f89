#pragma once
// Progress of long work, for a person at a terminal: one line on stderr, rewritten in place
// and cleared when the work ends. Where stderr is not a terminal (pipes, files, CI logs)
// nothing is printed, so scripted output stays as it was.
#include <chrono>
#include <string>

namespace tvlm {

class Progress {
public:
    explicit Progress(std::string command);  // "tvlm mips": the line's prefix
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;
    ~Progress();  // clears the line

    // The step now running ("writing level 3 of 15"), shown with the seconds so far.
    void step(const std::string& text);
    // Clears the line (before a command prints its results); a later step shows it again.
    void clear();

private:
    std::string command_;
    bool shown_ = false;
    size_t width_ = 0;  // of the line last written, to clear it
    std::chrono::steady_clock::time_point start_;
};

}  // namespace tvlm
