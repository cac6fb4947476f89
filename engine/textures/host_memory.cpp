#include "host_memory.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "error.h"

namespace tvlm {

namespace {

// The first number in `path`, or nullopt ("max", missing or unreadable).
std::optional<uint64_t> number_in(const char* path) {
    std::ifstream in(path);
    std::string word;
    if (!(in >> word) || word.empty() || word.find_first_not_of("0123456789") != std::string::npos) return {};
    return std::stoull(word);
}

std::optional<uint64_t> meminfo_available() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    while (in >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    return {};
}

std::optional<uint64_t> cgroup_available() {
    std::optional<uint64_t> limit = number_in("/sys/fs/cgroup/memory.max"), used;
    if (limit) used = number_in("/sys/fs/cgroup/memory.current");
    else {
        limit = number_in("/sys/fs/cgroup/memory/memory.limit_in_bytes");
        used = number_in("/sys/fs/cgroup/memory/memory.usage_in_bytes");
        if (limit && *limit >= (uint64_t{1} << 60)) limit.reset();  // v1's "no limit"
    }
    if (!limit) return {};
    return *limit > used.value_or(0) ? *limit - used.value_or(0) : 0;
}

// TVLM_HOST_MEMORY_LIMIT: bytes with an optional K, M or G (binary) suffix. A value that is
// not one is an error: a cap the user set and we ignored would be worse than none.
std::optional<uint64_t> user_limit() {
    const char* text = std::getenv("TVLM_HOST_MEMORY_LIMIT");
    if (!text || !*text) return {};
    std::istringstream in(text);
    uint64_t value = 0;
    std::string suffix;
    if (!std::isdigit(static_cast<unsigned char>(text[0])) || !(in >> value))
        throw Error(std::string("TVLM_HOST_MEMORY_LIMIT=") + text + " is not a number of bytes (e.g. 8G)");
    in >> suffix;
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
