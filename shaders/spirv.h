#pragma once
// The embedded SPIR-V of each compute shader in this folder, one function per shader.
#include <cstdint>
#include <span>

namespace tvlm::shaders {

std::span<const uint32_t> box_mips();
std::span<const uint32_t> box_mips_rgba8();
std::span<const uint32_t> box_mips_srgb8();
std::span<const uint32_t> box_mips_rgba16f();
std::span<const uint32_t> box_mips_rgba16f_rte();
std::span<const uint32_t> sample_patches_f32();
std::span<const uint32_t> sample_patches_f16();
std::span<const uint32_t> sample_points();
std::span<const uint32_t> frame_changes();
std::span<const uint32_t> overlay_bin();
std::span<const uint32_t> overlay_scan();
std::span<const uint32_t> overlay_shade();
std::span<const uint32_t> overlay_shade_rgba16f();
std::span<const uint32_t> knn_nearest();

}  // namespace tvlm::shaders
