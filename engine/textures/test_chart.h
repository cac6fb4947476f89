#pragma once
// The embedded default input: a test chart generated in code that makes aliasing and
// filtering visible (gradients, a zone plate, stripes of several frequencies and angles,
// checkerboards, small text-like detail).
#include "engine/textures/rgba8_image.h"

namespace tvlm {

inline constexpr uint32_t kTestChartWidth = 1536, kTestChartHeight = 1024;

Rgba8Image make_test_chart(uint32_t width = kTestChartWidth, uint32_t height = kTestChartHeight);

}  // namespace tvlm
