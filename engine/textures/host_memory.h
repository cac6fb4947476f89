#pragma once
// Host memory a job may still take, checked before it starts: a large image is refused with
// a clear error instead of the process being killed by the kernel's OOM killer halfway.
#include <cstdint>
#include <optional>
#include <string>

namespace tvlm {

// Bytes this process may still allocate: the smallest of /proc/meminfo's MemAvailable, its
// cgroup's limit less its usage (v2 memory.max / memory.current, or v1), and
// TVLM_HOST_MEMORY_LIMIT (bytes, or with a K, M or G suffix: a cap set by the user).
// nullopt where none of them is known.
std::optional<uint64_t> available_host_memory();

// Throws Error when `bytes` exceed available_host_memory(): "<what> needs about X GiB of
// host memory and Y GiB are available; <advice>". Nothing where the amount is unknown.
void check_host_memory(uint64_t bytes, const std::string& what, const std::string& advice);

// Whether `bytes` fit available_host_memory() (true where it is unknown).
bool fits_host_memory(uint64_t bytes);

}  // namespace tvlm
