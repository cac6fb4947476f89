#pragma once
// CPU reference mip chains: the definition of the `blit` and `box` filters (mip_filter.h).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/textures/format.h"
#include "engine/textures/image.h"
#include "engine/mips/mip_filter.h"

namespace tvlm {

// One level from the previous one, quantised to `format` as a GPU stores it. `box` uses
// the exact arithmetic of box_filter.h (8-bit results are exact, halves round up).
// `blit` works in double precision: sRGB colour channels are decoded to linear light,
// filtered and encoded again (alpha stays linear); UNORM8 is filtered in whole byte units
// and rounded half up. `dst` must be the next level's extent (mip_filter.h).
ImageF reference_downsample(const ImageF& src, Extent2D dst, MipFilter filter, Format format);

// Level 0 is `base` quantised to `format`; each further level is computed from the
// previous *quantised* level and quantised again, as a GPU that stores every level does.
std::vector<ImageF> reference_mip_chain(const ImageF& base, Format format, MipFilter filter, uint32_t levels);
// Host bytes of a reference chain of `levels` levels (float texels, `channels` each).
uint64_t reference_chain_bytes(uint32_t width, uint32_t height, uint32_t levels, uint32_t channels);
// Throws Error, naming `what` and what to do, where `layers` such chains (and a level 0
// being made beside them) would not fit the host memory this process may take.
void check_reference_chain_memory(uint32_t width, uint32_t height, uint32_t levels, uint32_t layers,
                                  const std::string& what);
// The same from a base the chain may take over (no copy of level 0).
std::vector<ImageF> reference_mip_chain(ImageF&& base, Format format, MipFilter filter, uint32_t levels);
// Levels 1 .. levels-1 of `chain` recomputed from its level 0 (already quantised), in place:
// besides the chain, memory for one level at a time.
void regenerate_mip_levels(std::vector<ImageF>& chain, Format format, MipFilter filter, uint32_t levels);

}  // namespace tvlm
