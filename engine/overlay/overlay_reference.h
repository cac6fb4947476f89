#pragma once
// The overlay's CPU reference: every pixel against every shape in order, with the shared
// arithmetic of shaders/overlay_shapes.h. The oracle of the GPU renderers' tests.
#include <cstdint>
#include <span>

#include "shaders/overlay_shapes.h"

namespace tvlm {

// Composites `shapes` over an RGBA8 frame (tight rows) in place; `srgb`: the bytes are sRGB
// and blend in linear light. Pixels no shape covers keep their bytes.
void draw_overlay_reference(std::span<const gpu::OverlayShape> shapes, std::span<uint8_t> rgba, uint32_t width,
                            uint32_t height, bool srgb);

// The same over an RGBA16F frame (halves, tight rows), blended as stored (linear light) and
// rounded to the nearest half.
void draw_overlay_reference_f16(std::span<const gpu::OverlayShape> shapes, std::span<uint16_t> halves, uint32_t width,
                                uint32_t height);

}  // namespace tvlm
