#pragma once
// Files `tvlm sample` writes. Each appears whole or not at all (temporary name, rename).
#include <cstdint>
#include <string>
#include <vector>

namespace tvlm {

// A NumPy .npy (format 1.0, little-endian float32, C order) of `shape`.
void write_npy(const std::string& path, const std::vector<size_t>& shape, const std::vector<float>& values);
// Text written to `path`.
void write_text(const std::string& path, const std::string& text);

}  // namespace tvlm
