#include "engine/textures/host_memory.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "engine/error.h"

namespace tvlm {

namespace {

// The first number in `path`, or nullopt ("max", missing or unreadable).
std::optional<uint64_t> number_in(const char* path) {
    std::ifstream in(path);
    std::string word;
    if (!(in >> word) || word.empty() || word.find_first_not_of("0123456789") != std::string::npos) return {};
    return std::stoull(word);
}

// MemAvailable from /proc/meminfo, a line at a time (some lines have no unit). nullopt where
// it is missing or 0 (a sandbox's /proc may report 0: not a bound worth refusing on).
std::optional<uint64_t> meminfo_available() {
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        unsigned long long kib = 0;
        if (std::sscanf(line.c_str(), "MemAvailable: %llu", &kib) == 1)
            return kib ? std::optional<uint64_t>(uint64_t{kib} * 1024) : std::nullopt;
    }
    return {};
}

// `key`'s value in a cgroup memory.stat file, or 0. Numbers are read with the C library, not
// iostreams: a global C++ locale set by the host application must not change what is read.
uint64_t stat_value(const char* path, const std::string& key) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 && line[key.size()] == ' ')
            return std::strtoull(line.c_str() + key.size() + 1, nullptr, 10);
    return 0;
}

// The cgroup's limit less what it uses, not counting inactive file pages: the page cache is
// charged to the cgroup but reclaimed under pressure (as docker stats and MemAvailable count).
std::optional<uint64_t> cgroup_available() {
    std::optional<uint64_t> limit = number_in("/sys/fs/cgroup/memory.max"), used;
    uint64_t cache = 0;
    if (limit) {
        used = number_in("/sys/fs/cgroup/memory.current");
        cache = stat_value("/sys/fs/cgroup/memory.stat", "inactive_file");
    } else {
        limit = number_in("/sys/fs/cgroup/memory/memory.limit_in_bytes");
        used = number_in("/sys/fs/cgroup/memory/memory.usage_in_bytes");
        cache = stat_value("/sys/fs/cgroup/memory/memory.stat", "total_inactive_file");
        if (limit && *limit >= (uint64_t{1} << 60)) limit.reset();  // v1's "no limit"
    }
    if (!limit) return {};
    const uint64_t in_use = used.value_or(0) > cache ? used.value_or(0) - cache : 0;
    return *limit > in_use ? *limit - in_use : 0;
}

// TVLM_HOST_MEMORY_LIMIT: bytes with an optional K, M or G (binary) suffix. A value that is
// not one is an error: a cap the user set and we ignored would be worse than none.
std::optional<uint64_t> user_limit() {
    const char* text = std::getenv("TVLM_HOST_MEMORY_LIMIT");
    if (!text || !*text) return {};
    char* end = nullptr;
    errno = 0;
    const uint64_t value = std::isdigit(static_cast<unsigned char>(text[0])) ? std::strtoull(text, &end, 10) : 0;
    if (!end || end == text || errno == ERANGE)
        throw Error(std::string("TVLM_HOST_MEMORY_LIMIT=") + text + " is not a number of bytes (e.g. 8G)");
    const std::string suffix = end;
    const int shift = suffix.empty() ? 0 : suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : -1;
    if (shift < 0) throw Error(std::string("TVLM_HOST_MEMORY_LIMIT=") + text + ": the suffix is K, M or G (e.g. 8G)");
    return value > (UINT64_MAX >> shift) ? UINT64_MAX : value << shift;
}

std::string gib(uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(uint64_t{1} << 30));
    return text;
}

}  // namespace

std::optional<uint64_t> available_host_memory() {
    std::optional<uint64_t> best;
    for (const std::optional<uint64_t>& bound : {meminfo_available(), cgroup_available(), user_limit()})
        if (bound) best = best ? std::min(*best, *bound) : *bound;
    return best;
}

bool fits_host_memory(uint64_t bytes) {
    const std::optional<uint64_t> available = available_host_memory();
    return !available || bytes <= *available;
}

void check_host_memory(uint64_t bytes, const std::string& what, const std::string& advice) {
    const std::optional<uint64_t> available = available_host_memory();
    if (available && bytes > *available)
        throw Error(what + " needs about " + gib(bytes) + " of host memory and " + gib(*available) +
                    " are available; " + advice);
}

}  // namespace tvlm
