#pragma once
// The process's open fds, for leak checks: "number -> target", so a failure shows what leaked.
#include <filesystem>
#include <set>
#include <string>

namespace tvlm::test {

inline std::set<std::string> open_fds() {
    std::set<std::string> fds;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        const std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
        if (!ec && target.rfind("/proc/", 0) == 0 && target.find("/fd") != std::string::npos)
            continue;  // the directory iterator's own fd
        fds.insert(entry.path().filename().string() + " -> " + (ec ? "?" : target));
    }
    return fds;
}

// Entries of `now` not in `before`, joined: "" when nothing leaked.
inline std::string new_fds(const std::set<std::string>& before, const std::set<std::string>& now) {
    std::string added;
    for (const std::string& fd : now)
        if (!before.count(fd)) added += fd + "; ";
    return added;
}

}  // namespace tvlm::test
