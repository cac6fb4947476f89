#pragma once
// The embedded SPIR-V of each compute shader in this folder, one function per shader.
#include <cstdint>
#include <span>

namespace tvlm::shaders {

std::span<const uint32_t> box_downsample();

}  // namespace tvlm::shaders
